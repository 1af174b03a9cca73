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
  KEEPER_CUSTOM_TYPES,
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

/**
 * Rebuilds state from the session branch entries (root to leaf order). Entries that are
 * not this extension's are ignored; ours that fail their schema are skipped with one
 * diagnostic each. Never throws.
 */
export function restoreState(entries: readonly unknown[]): RestoredState {
  const state = emptyState();
  const diagnostics: string[] = [];
  entries.forEach((raw, index) => {
    if (typeof raw !== "object" || raw === null) return;
    const entry = raw as CustomEntryLike;
    if (entry.type !== "custom") return;
    const label = () => `${String(entry.customType)} entry ${typeof entry.id === "string" ? entry.id : `#${index}`}`;
    const version = (entry.data as { version?: unknown } | null | undefined)?.version;
    if (KEEPER_CUSTOM_TYPES.includes(entry.customType as KeeperCustomType) && typeof version === "number" && version !== STATE_VERSION) {
      diagnostics.push(`skipped ${label()}: format version ${version} is not readable by this version (${STATE_VERSION})`);
      return;
    }
    switch (entry.customType) {
      case CUSTOM_TYPE_FRONTIER: {
        const r = decodeWith(FrontierSchema, entry.data);
        if (r.ok) state.frontier = r.value;
        else diagnostics.push(`skipped ${label()}: ${r.error}`);
        return;
      }
      case CUSTOM_TYPE_SUMMARY: {
        const r = decodeWith(SummaryRecordSchema, entry.data);
        if (r.ok) state.summaries[r.value.batchKey] = r.value;
        else diagnostics.push(`skipped ${label()}: ${r.error}`);
        return;
      }
      case CUSTOM_TYPE_STATS: {
        const r = decodeWith(StatsSchema, entry.data);
        if (r.ok) state.stats = r.value;
        else diagnostics.push(`skipped ${label()}: ${r.error}`);
        return;
      }
      case CUSTOM_TYPE_FLUSH: {
        const problem = restoreFlushRecord(state, entry.data);
        if (problem) diagnostics.push(`${problem.whole ? "skipped" : "partly skipped"} ${label()}: ${problem.text}`);
        return;
      }
    }
  });
  return { state, diagnostics };
}

/** Applies one flush entry's parts to `state`; says what it had to leave out. */
function restoreFlushRecord(state: { frontier: Frontier; summaries: Record<string, SummaryRecord>; stats: Stats }, data: unknown): { whole: boolean; text: string } | undefined {
  const envelope = decodeWith(FlushEnvelopeSchema, data);
  if (!envelope.ok) return { whole: true, text: envelope.error };
  if (envelope.value.version !== STATE_VERSION) return { whole: true, text: `format version ${envelope.value.version} is not readable by this version (${STATE_VERSION})` };
  const problems: string[] = [];
  envelope.value.summaries.forEach((raw, i) => {
    const r = decodeWith(SummaryRecordSchema, raw);
    if (r.ok) state.summaries[r.value.batchKey] = r.value;
    else problems.push(`summaries.${i}.${r.error}`);
  });
  if (envelope.value.frontier !== undefined) {
    const r = decodeWith(FrontierSchema, envelope.value.frontier);
    if (r.ok) state.frontier = r.value;
    else problems.push(`frontier.${r.error}`);
  }
  if (envelope.value.stats !== undefined) {
    const r = decodeWith(StatsSchema, envelope.value.stats);
    if (r.ok) state.stats = r.value;
    else problems.push(`stats.${r.error}`);
  }
  return problems.length === 0 ? undefined : { whole: false, text: problems.join("; ") };
}
