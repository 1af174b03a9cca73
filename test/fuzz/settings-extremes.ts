/**
 * Settings for a fuzzed session: every key of `src/settings/schema.ts` either left at its
 * default or set to one of its extremes (smallest and largest values the schema accepts,
 * plus the defaults' neighbours). The choice is a sparse `contextKeeper` object, read
 * through the real settings parser, so a fixture shows only what differs from the defaults.
 */
import fc from "fast-check";
import { mergeSettings, parseKeeperSection } from "../../src/settings/parse.ts";
import type { KeeperSettings } from "../../src/settings/schema.ts";

export type SettingsChoice = { [key: string]: unknown };

/** Extremes per leaf key (dotted path). */
export const EXTREMES: Record<string, readonly unknown[]> = {
  enabled: [true, true, true, false],
  "pruning.enabled": [true, false],
  "pruning.minBatchChars": [0, 1, 400, 1_000_000_000],
  "pruning.protectedTools": [[], ["read"], ["read", "bash", "edit", "grep"]],
  "pruning.protectedPaths": [[], ["**"], ["src/**"], [".env", "*.lock"]],
  "pruning.errorPurge.enabled": [true, false],
  "pruning.errorPurge.cooldownTurns": [0, 1, 1_000_000],
  "pruning.chainCompression.enabled": [true, false],
  "pruning.chainCompression.rollingWindow": [1, 2, 1_000_000],
  "pruning.budgetTrigger.enabled": [true, false],
  "pruning.budgetTrigger.fraction": [1e-9, 0.01, 1],
  "pruning.budgetTrigger.maxTokens": [1, 500, 2_000_000_000],
  "summarizer.mode": ["auto", "model", "extractive"],
  "summarizer.idleTimeoutMs": [1, 2_000_000_000],
  "summarizer.ceilingTimeoutMs": [1, 2_000_000_000],
  "recall.spillThresholdBytes": [1, 4096, 1_000_000_000_000],
  "recall.pageChars": [1, 97, 1_000_000_000],
  "thinkingStrip.mode": ["auto", "off", "flush-gated"],
  "thinkingStrip.keepLastTurns": [0, 1, 4, 1_000_000],
  "compaction.enabled": [true, false],
  "cache.discipline": [true, false],
  "cache.seam": [true, false],
  "cache.gridChunkTokens": [1, 300, 1_000_000_000],
  "cache.keepTailTokens": [0, 1, 2_000, 1_000_000_000],
  "cache.minNetSaving": [-1_000_000_000, 0, 1_000_000_000],
  "cache.horizonCap": [1, 1_000_000],
};

function setPath(target: SettingsChoice, path: string, value: unknown): void {
  const parts = path.split(".");
  let node = target;
  for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as SettingsChoice;
  node[parts[parts.length - 1]] = value;
}

/** Each key: absent (default) about 60% of the time, else one of its extremes. */
export const settingsChoice: fc.Arbitrary<SettingsChoice> = fc
  .record(
    Object.fromEntries(
      Object.entries(EXTREMES).map(([key, values]) => [key, fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.constantFrom(...values), weight: 2 })]),
    ) as Record<string, fc.Arbitrary<unknown>>,
  )
  .map((leaves) => {
    const out: SettingsChoice = {};
    for (const [key, value] of Object.entries(leaves)) if (value !== undefined) setPath(out, key, value);
    return out;
  });

/** The settings a choice means, through the extension's own parser (which must accept every extreme). */
export function settingsOf(choice: SettingsChoice): KeeperSettings {
  const { partial, diagnostics } = parseKeeperSection(choice, "fuzz");
  if (diagnostics.length > 0) throw new Error(`fuzz settings rejected: ${diagnostics.map((d) => `${d.key}: ${d.message}`).join("; ")}`);
  return mergeSettings(partial);
}
