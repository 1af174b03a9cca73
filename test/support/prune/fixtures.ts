/** Small state builders for render-phase tests. */
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../../../src/prune/config.ts";
import { type CompressedChain, type KeeperState, STATE_VERSION, type SummaryRecord, emptyState } from "../../../src/state/schema.ts";

export const config: PruneConfig = { ...DEFAULT_PRUNE_CONFIG, minBatchChars: 10 };

export function record(batchKey: string, coveredKeys: string[], text: string, source: "model" | "raw" = "model"): SummaryRecord {
  return {
    version: STATE_VERSION,
    batchKey,
    summary: { batchKey, text, source, inputTokens: 10, outputTokens: 5, cost: 0.001 },
    coveredKeys,
    outputHashes: Object.fromEntries(coveredKeys.map((k) => [k, `h-${k}`])),
    flushSeq: 1,
  };
}

export function stateWith(parts: {
  records?: SummaryRecord[];
  stubbed?: string[];
  aliases?: Record<string, string>;
  purged?: string[];
  chains?: CompressedChain[];
  boundary?: number;
}): KeeperState {
  const s = emptyState();
  for (const r of parts.records ?? []) s.summaries[r.batchKey] = r;
  s.frontier = {
    ...s.frontier,
    flushSeq: 1,
    stubbedKeys: parts.stubbed ?? [],
    aliases: parts.aliases ?? {},
    purgedErrorKeys: parts.purged ?? [],
    compressedChains: parts.chains ?? [],
    ...(parts.boundary === undefined ? {} : { thinkingStripBoundaryTimestamp: parts.boundary }),
  };
  return s;
}

/** Deep-freezes test input so any in-place mutation by a phase throws. */
export function frozen<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}
