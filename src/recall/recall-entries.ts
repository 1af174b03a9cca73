/**
 * Persistence of the recall index: each flush's `context-keeper/flush` entry carries only the
 * occurrences it added (`recall`); sessions written before it hold them in entries of their own
 * (`context-keeper/recall`). Restore merges both kinds in branch order. Every occurrence goes through
 * the zod schema both ways, so no field is ever dropped on reload.
 */
import { z } from "zod";
import { CUSTOM_TYPE_FLUSH } from "../state/schema.ts";
import { recallEntrySchema, recallIndexSchema, type RecallIndex } from "./recall-index.ts";

/** The recall entries of older sessions (read, no longer written). */
export const CUSTOM_TYPE_RECALL = "context-keeper/recall";

/** The entries of `next` that `previous` does not have, as an index (for one custom entry). */
export function recallDelta(previous: RecallIndex, next: RecallIndex): RecallIndex | undefined {
  const added = Object.entries(next.entries).filter(([key]) => !(key in previous.entries));
  if (added.length === 0) return undefined;
  return recallIndexSchema.parse({ version: 1, entries: Object.fromEntries(added) });
}

const recallEnvelopeSchema = z.object({ version: z.number(), entries: z.record(z.string(), z.unknown()) });

/**
 * Merge the branch's recall entries in order. Each occurrence is validated on its own: one
 * wrong field skips that occurrence, not the entry holding it (recall then finds that original
 * on the branch by its ref). An entry of another format version is skipped whole. One
 * diagnostic per entry that lost anything. Never throws.
 */
export function restoreRecallIndex(entries: readonly unknown[]): { index: RecallIndex; diagnostics: string[] } {
  const merged: RecallIndex["entries"] = {};
  const diagnostics: string[] = [];
  for (const raw of entries) {
    const entry = raw as { type?: unknown; customType?: unknown; data?: unknown; id?: unknown };
    if (entry?.type !== "custom") continue;
    let data: unknown;
    if (entry.customType === CUSTOM_TYPE_RECALL) data = entry.data;
    else if (entry.customType === CUSTOM_TYPE_FLUSH) data = (entry.data as { recall?: unknown } | null)?.recall;
    if (data === undefined) continue;
    const label = `${String(entry.customType)} entry ${String(entry.id ?? "?")}${entry.customType === CUSTOM_TYPE_FLUSH ? " (recall)" : ""}`;
    const envelope = recallEnvelopeSchema.safeParse(data);
    if (!envelope.success) {
      diagnostics.push(`${label}: ${envelope.error.issues[0]?.message ?? "invalid"}; skipped`);
      continue;
    }
    if (envelope.data.version !== 1) {
      diagnostics.push(`${label}: format version ${envelope.data.version} is not readable by this version (1); skipped`);
      continue;
    }
    const problems: string[] = [];
    let kept = 0;
    for (const [key, value] of Object.entries(envelope.data.entries)) {
      const parsed = recallEntrySchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        problems.push(`${key} (${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"})`);
        continue;
      }
      if (parsed.data.occurrenceKey !== key) {
        problems.push(`${parsed.data.occurrenceKey} (filed under ${key})`);
        continue;
      }
      merged[key] = parsed.data;
      kept++;
    }
    if (problems.length > 0) diagnostics.push(`${label}: skipped ${problems.length} unreadable occurrence(s) ${problems.join(", ")}; kept ${kept}`);
  }
  return { index: { version: 1, entries: merged }, diagnostics };
}
