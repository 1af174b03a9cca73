/**
 * Reading and writing the persisted state as Pi `custom` entries. Every value goes
 * through its zod schema both ways.
 */
import { z } from "zod";
import {
  CUSTOM_TYPE_FLUSH,
  CUSTOM_TYPE_FRONTIER,
  CUSTOM_TYPE_STATS,
  CUSTOM_TYPE_SUMMARY,
  FLUSH_RECORD_VERSION,
  type FlushRecord,
  FlushRecordSchema,
  type Frontier,
  type FrontierChain,
  FrontierDeltaSchema,
  FrontierSchema,
  type KeeperCustomType,
  type KeeperState,
  type Stats,
  StatsSchema,
  type SummaryRecord,
  SummaryRecordSchema,
  STATE_VERSION,
  emptyFrontier,
  emptyState,
} from "./schema.ts";
import type { RecallIndex } from "../recall/recall-index.ts";
import { type CheckpointPolicy, checkpointChain, foldFrontier, frontierPart } from "./frontier-fold.ts";

/** A custom entry to append (`pi.appendEntry(customType, data)` or a `turn_end` draft). */
export interface KeeperEntry {
  customType: KeeperCustomType;
  data: unknown;
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** Validates before writing; throws only on a programming error (an invalid in-memory value). */
export function encodeWith<S extends z.ZodType>(schema: S, value: z.input<S>): z.output<S> {
  return schema.parse(value);
}

export function decodeWith<S extends z.ZodType>(schema: S, data: unknown): Decoded<z.output<S>> {
  const r = schema.safeParse(data);
  if (r.success) return { ok: true, value: r.data };
  const first = r.error.issues[0];
  const where = first && first.path.length > 0 ? first.path.join(".") : "(root)";
  return { ok: false, error: `${where}: ${first?.message ?? "invalid"}` };
}

/** The separate entries of older sessions (restore still reads them; tests write fixtures with them). */
export function frontierEntry(frontier: Frontier): KeeperEntry {
  return { customType: CUSTOM_TYPE_FRONTIER, data: encodeWith(FrontierSchema, frontier) };
}

export function summaryEntry(record: SummaryRecord): KeeperEntry {
  return { customType: CUSTOM_TYPE_SUMMARY, data: encodeWith(SummaryRecordSchema, record) };
}

export function statsEntry(stats: Stats): KeeperEntry {
  return { customType: CUSTOM_TYPE_STATS, data: encodeWith(StatsSchema, stats) };
}

export function flushRecordEntry(record: FlushRecord): KeeperEntry {
  return { customType: CUSTOM_TYPE_FLUSH, data: encodeWith(FlushRecordSchema, record) };
}

/**
 * The one entry a flush appends: its new summaries, its frontier as a delta from `previous`'s
 * (a full checkpoint when due, `frontierPart`), its stats when it has any; and the chain the
 * next state carries. `recall` is added by the engine once it knows what the flush indexed.
 */
export function flushEntryOf(input: {
  previous: KeeperState;
  frontier: Frontier;
  summaries: readonly SummaryRecord[];
  stats?: Stats;
  /** When a checkpoint is due (default `CHECKPOINT_POLICY`; tests make it due often). */
  policy?: CheckpointPolicy;
}): { entry: KeeperEntry; chain: FrontierChain } {
  const { part, chain } = frontierPart({ previous: input.previous.frontier, next: input.frontier, chain: input.previous.frontierChain, policy: input.policy });
  const record: FlushRecord = { version: FLUSH_RECORD_VERSION, summaries: [...input.summaries], ...part, ...(input.stats ? { stats: input.stats } : {}) };
  return { entry: flushRecordEntry(record), chain };
}

/** A flush entry with the recall delta the flush indexed (`recall`), or a new one holding only it. */
export function withRecallDelta(entry: KeeperEntry | undefined, recall: RecallIndex): KeeperEntry {
  const record: FlushRecord = entry ? (entry.data as FlushRecord) : { version: FLUSH_RECORD_VERSION, summaries: [] };
  return flushRecordEntry({ ...record, recall });
}

/** The parts of a flush entry, each left for its own schema (one bad part costs only itself). */
const FlushEnvelopeSchema = z.object({
  version: z.number(),
  summaries: z.array(z.unknown()),
  frontier: z.unknown().optional(),
  frontierDelta: z.unknown().optional(),
  stats: z.unknown().optional(),
});

export interface RestoredState {
  state: KeeperState;
  /** One line per skipped entry (corrupt or from another format version). */
  diagnostics: string[];
}

interface CustomEntryLike {
  type?: unknown;
  id?: unknown;
  customType?: unknown;
  data?: unknown;
}

/** A value waiting to be decoded: only the latest readable stats, and the frontier from its latest readable checkpoint on. */
interface Candidate {
  label: string;
  data: unknown;
}

const versionProblem = (data: unknown, readable: readonly number[] = [STATE_VERSION]): string | undefined => {
  const version = (data as { version?: unknown } | null | undefined)?.version;
  return typeof version === "number" && !readable.includes(version)
    ? `format version ${version} is not readable by this version (${readable.join(" or ")})`
    : undefined;
};

/** Decodes a versioned value: a version this code cannot read is reported as such, not as a schema error. */
const decodeVersioned = <T>(schema: z.ZodType<T>, data: unknown): Decoded<T> => {
  const tooNew = versionProblem(data);
  return tooNew === undefined ? decodeWith(schema, data) : { ok: false, error: tooNew };
};

/**
 * The latest candidate that decodes wins; only the ones after it are decoded (and reported
 * when unreadable). A long session holds hundreds of snapshots: decoding them all would cost
 * most of a restart.
 */
function latestReadable<T>(schema: z.ZodType<T>, candidates: readonly Candidate[], diagnostics: string[]): { value: T; at: number } | undefined {
  for (let i = candidates.length - 1; i >= 0; i--) {
    const c = candidates[i]!;
    const r = decodeVersioned(schema, c.data);
    if (r.ok) return { value: r.value, at: i };
    diagnostics.push(`skipped ${c.label}: ${r.error}`);
  }
  return undefined;
}

/**
 * Rebuilds state from the session branch entries (root to leaf order). Entries that are
 * not this extension's are ignored; summaries accumulate, each decoded on its own; the
 * frontier is the latest readable checkpoint (a flush entry's `frontier`, or an old frontier
 * snapshot) with the deltas after it folded on in order (`src/state/frontier-fold.ts`); of the
 * stats snapshots the latest readable one wins (older ones are not decoded). Whatever fails its
 * schema, comes from another format version, or does not follow the frontier folded so far, is
 * skipped with one diagnostic. Never throws.
 */
export function restoreState(entries: readonly unknown[]): RestoredState {
  const state = emptyState();
  const diagnostics: string[] = [];
  const checkpoints: Candidate[] = [];
  /** Deltas in branch order, each with the number of checkpoints before it. */
  const deltas: Array<Candidate & { after: number }> = [];
  const stats: Candidate[] = [];
  const addSummary = (label: string, data: unknown) => {
    const r = decodeVersioned(SummaryRecordSchema, data);
    if (r.ok) state.summaries[r.value.batchKey] = r.value;
    else diagnostics.push(`skipped ${label}: ${r.error}`);
  };
  entries.forEach((raw, index) => {
    if (typeof raw !== "object" || raw === null) return;
    const entry = raw as CustomEntryLike;
    if (entry.type !== "custom") return;
    const label = `${String(entry.customType)} entry ${typeof entry.id === "string" ? entry.id : `#${index}`}`;
    switch (entry.customType) {
      case CUSTOM_TYPE_FRONTIER:
        checkpoints.push({ label, data: entry.data });
        return;
      case CUSTOM_TYPE_STATS:
        stats.push({ label, data: entry.data });
        return;
      case CUSTOM_TYPE_SUMMARY:
        addSummary(label, entry.data);
        return;
      case CUSTOM_TYPE_FLUSH: {
        const envelope = decodeWith(FlushEnvelopeSchema, entry.data);
        const problem = envelope.ok ? versionProblem(envelope.value, [STATE_VERSION, FLUSH_RECORD_VERSION]) : envelope.error;
        if (!envelope.ok || problem !== undefined) {
          diagnostics.push(`skipped ${label}: ${problem}`);
          return;
        }
        envelope.value.summaries.forEach((data, i) => addSummary(`${label} (summaries.${i})`, data));
        if (envelope.value.frontier !== undefined) checkpoints.push({ label: `${label} (frontier)`, data: envelope.value.frontier });
        if (envelope.value.frontierDelta !== undefined) deltas.push({ label: `${label} (frontierDelta)`, data: envelope.value.frontierDelta, after: checkpoints.length });
        if (envelope.value.stats !== undefined) stats.push({ label: `${label} (stats)`, data: envelope.value.stats });
        return;
      }
    }
  });
  const restored = restoreFrontier(checkpoints, deltas, diagnostics);
  state.frontier = restored.frontier;
  if (restored.chain) state.frontierChain = restored.chain;
  state.stats = latestReadable(StatsSchema, stats, diagnostics)?.value ?? state.stats;
  return { state, diagnostics };
}

/**
 * The latest readable checkpoint, then every delta after it in order. A delta that is
 * unreadable or does not follow (its flush's checkpoint or delta was lost) is skipped, and so is
 * every later one until a checkpoint: the frontier stops at the last flush that landed whole
 * (the torn-flush reconciliation re-proposes the summaries of the flushes after it). The chain
 * is left unknown then, so the next flush writes a checkpoint.
 */
function restoreFrontier(checkpoints: readonly Candidate[], deltas: ReadonlyArray<Candidate & { after: number }>, diagnostics: string[]): { frontier: Frontier; chain?: FrontierChain } {
  const base = latestReadable(FrontierSchema, checkpoints, diagnostics);
  const fold = foldFrontier(base?.value ?? emptyFrontier());
  let chain: FrontierChain | undefined = base ? checkpointChain(base.value) : undefined;
  for (const d of deltas) {
    if (base && d.after <= base.at) continue;
    const r = decodeWith(FrontierDeltaSchema, d.data);
    if (!r.ok) diagnostics.push(`skipped ${d.label}: ${r.error}`);
    else if (!fold.apply(r.value)) diagnostics.push(`skipped ${d.label}: it follows flush ${r.value.from}, the frontier restored so far is at flush ${fold.flushSeq()}`);
    else {
      if (chain) chain = { ...chain, deltas: chain.deltas + 1, deltaBytes: chain.deltaBytes + JSON.stringify(d.data).length };
      continue;
    }
    chain = undefined;
  }
  return { frontier: fold.frontier(), ...(chain ? { chain } : {}) };
}
