/**
 * Persistence of the recall index: each flush appends one custom entry holding only the
 * occurrences it added; restore merges them in branch order. Every entry goes through the
 * zod schema both ways, so no field is ever dropped on reload.
 */
import { emptyRecallIndex, recallIndexSchema, type RecallIndex } from "./recall-index.ts";

export const CUSTOM_TYPE_RECALL = "context-keeper/recall";

/** The entries of `next` that `previous` does not have, as an index (for one custom entry). */
export function recallDelta(previous: RecallIndex, next: RecallIndex): RecallIndex | undefined {
  const added = Object.entries(next.entries).filter(([key]) => !(key in previous.entries));
  if (added.length === 0) return undefined;
  return recallIndexSchema.parse({ version: 1, entries: Object.fromEntries(added) });
}

export function restoreRecallIndex(entries: readonly unknown[]): { index: RecallIndex; diagnostics: string[] } {
  let index = emptyRecallIndex();
  const diagnostics: string[] = [];
  for (const raw of entries) {
    const entry = raw as { type?: unknown; customType?: unknown; data?: unknown; id?: unknown };
    if (entry?.type !== "custom" || entry.customType !== CUSTOM_TYPE_RECALL) continue;
    const parsed = recallIndexSchema.safeParse(entry.data);
    if (!parsed.success) {
      diagnostics.push(`${CUSTOM_TYPE_RECALL} entry ${String(entry.id ?? "?")}: ${parsed.error.issues[0]?.message ?? "invalid"}; skipped`);
      continue;
    }
    index = { version: 1, entries: { ...index.entries, ...parsed.data.entries } };
  }
  return { index, diagnostics };
}
