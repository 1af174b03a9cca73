/**
 * Reading and writing the persisted state as Pi `custom` entries. Every value goes
 * through its zod schema both ways.
 */
import { z } from "zod";
import type { RecallIndex } from "../recall/recall-index.ts";
import {
  CUSTOM_TYPE_FLUSH,
  CUSTOM_TYPE_FRONTIER,
  CUSTOM_TYPE_STATS,
  CUSTOM_TYPE_SUMMARY,
  type FlushRecord,
  FlushRecordSchema,
  type Frontier,
  FrontierSchema,
  type KeeperCustomType,
  type KeeperState,
  type Stats,
  StatsSchema,
  type SummaryRecord,
  SummaryRecordSchema,
  STATE_VERSION,
  emptyState,
} from "./schema.ts";

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
 * A flush's separate entries (a plan's `entriesToPersist`) and its recall delta folded into
 * one atomic `context-keeper/flush` entry: append this one instead of them.
 */
export function atomicFlushEntry(entries: readonly KeeperEntry[], recall?: RecallIndex): KeeperEntry {
  const record: FlushRecord = { version: STATE_VERSION, summaries: [] };
  for (const e of entries) {
    if (e.customType === CUSTOM_TYPE_SUMMARY) record.summaries.push(e.data as SummaryRecord);
    else if (e.customType === CUSTOM_TYPE_FRONTIER) record.frontier = e.data as Frontier;
    else if (e.customType === CUSTOM_TYPE_STATS) record.stats = e.data as Stats;
    else throw new Error(`atomicFlushEntry: ${e.customType} cannot be folded into a flush entry`);
  }
  if (recall !== undefined) record.recall = recall;
  return flushRecordEntry(record);
}

/** The parts of a flush entry, each left for its own schema (one bad part costs only itself). */
const FlushEnvelopeSchema = z.object({
  version: z.number(),
  summaries: z.array(z.unknown()),
  frontier: z.unknown().optional(),
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

/** A frontier or stats value waiting to be decoded: only the latest readable one is. */
interface Candidate {
  label: string;
  data: unknown;
}

const versionProblem = (data: unknown): string | undefined => {
  const version = (data as { version?: unknown } | null | undefined)?.version;
  return typeof version === "number" && version !== STATE_VERSION ? `format version ${version} is not readable by this version (${STATE_VERSION})` : undefined;
};

/**
 * The latest candidate that decodes wins; only the ones after it are decoded (and reported
 * when unreadable). Frontier and stats are full snapshots, so a long session holds hundreds of
 * them: decoding them all would cost most of a restart.
 */
function latestReadable<T>(schema: z.ZodType<T>, candidates: readonly Candidate[], diagnostics: string[]): T | undefined {
  for (let i = candidates.length - 1; i >= 0; i--) {
    const c = candidates[i]!;
    const tooNew = versionProblem(c.data);
    const r = tooNew === undefined ? decodeWith(schema, c.data) : ({ ok: false, error: tooNew } as const);
    if (r.ok) return r.value;
    diagnostics.push(`skipped ${c.label}: ${r.error}`);
  }
  return undefined;
}

/**
 * Rebuilds state from the session branch entries (root to leaf order). Entries that are
 * not this extension's are ignored; summaries accumulate, each decoded on its own; of the
 * frontier and stats snapshots the latest readable one wins (older ones are not decoded).
 * Whatever fails its schema, or comes from another format version, is skipped with one
 * diagnostic. Never throws.
 */
export function restoreState(entries: readonly unknown[]): RestoredState {
  const state = emptyState();
  const diagnostics: string[] = [];
  const frontiers: Candidate[] = [];
  const stats: Candidate[] = [];
  const addSummary = (label: string, data: unknown) => {
    const tooNew = versionProblem(data);
    const r = tooNew === undefined ? decodeWith(SummaryRecordSchema, data) : ({ ok: false, error: tooNew } as const);
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
        frontiers.push({ label, data: entry.data });
        return;
      case CUSTOM_TYPE_STATS:
        stats.push({ label, data: entry.data });
        return;
      case CUSTOM_TYPE_SUMMARY:
        addSummary(label, entry.data);
        return;
      case CUSTOM_TYPE_FLUSH: {
        const envelope = decodeWith(FlushEnvelopeSchema, entry.data);
        const problem = envelope.ok ? versionProblem(envelope.value) : envelope.error;
        if (!envelope.ok || problem !== undefined) {
          diagnostics.push(`skipped ${label}: ${problem}`);
          return;
        }
        envelope.value.summaries.forEach((data, i) => addSummary(`${label} (summaries.${i})`, data));
        if (envelope.value.frontier !== undefined) frontiers.push({ label: `${label} (frontier)`, data: envelope.value.frontier });
        if (envelope.value.stats !== undefined) stats.push({ label: `${label} (stats)`, data: envelope.value.stats });
        return;
      }
    }
  });
  state.frontier = latestReadable(FrontierSchema, frontiers, diagnostics) ?? state.frontier;
  state.stats = latestReadable(StatsSchema, stats, diagnostics) ?? state.stats;
  return { state, diagnostics };
}
