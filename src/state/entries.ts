/**
 * Reading and writing the persisted state as Pi `custom` entries. Every value goes
 * through its zod schema both ways.
 */
import type { z } from "zod";
import {
  CUSTOM_TYPE_FRONTIER,
  CUSTOM_TYPE_STATS,
  CUSTOM_TYPE_SUMMARY,
  type Frontier,
  FrontierSchema,
  type KeeperCustomType,
  type KeeperState,
  type Stats,
  StatsSchema,
  type SummaryRecord,
  SummaryRecordSchema,
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
    }
  });
  return { state, diagnostics };
}
