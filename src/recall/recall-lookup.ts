/**
 * Find which original a recall request means: by ref (occurrence key) or by provider
 * tool-call id, with near matches when nothing fits and the list of occurrences when an id
 * is ambiguous.
 */
import { type RecallEntry, type RecallIndex, newestFirst, occurrencesOf } from "./recall-index.ts";

export type RecallLookup =
  | { kind: "found"; entry: RecallEntry }
  | { kind: "ambiguous"; toolCallId: string; entries: RecallEntry[] }
  | { kind: "unknown"; query: string; nearMatches: RecallEntry[] }
  | { kind: "invalid"; message: string };

function editDistance(a: string, b: string): number {
  const x = a.slice(0, 200);
  const y = b.slice(0, 200);
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length];
}

/** Entries whose ref or id resembles the query: shares a substring, or is a few edits away. */
export function nearMatches(index: RecallIndex, query: string, limit = 5): RecallEntry[] {
  const q = query.trim().toLowerCase();
  if (q === "") return [];
  const scored: { entry: RecallEntry; score: number }[] = [];
  for (const entry of Object.values(index.entries)) {
    const candidates = [entry.occurrenceKey.toLowerCase(), entry.toolCallId.toLowerCase()];
    let best = Infinity;
    for (const c of candidates) {
      if (c.includes(q) || (q.length >= 6 && q.includes(c))) best = Math.min(best, 0);
      else best = Math.min(best, editDistance(q, c));
    }
    const allowed = Math.max(3, Math.floor(q.length * 0.4));
    if (best <= allowed) scored.push({ entry, score: best });
  }
  return scored
    .sort((a, b) => a.score - b.score || newestFirst(a.entry, b.entry))
    .slice(0, limit)
    .map((s) => s.entry);
}

export function lookupRecall(index: RecallIndex, request: { ref?: string; toolCallId?: string }): RecallLookup {
  const ref = request.ref?.trim();
  const id = request.toolCallId?.trim();
  if (!ref && !id) return { kind: "invalid", message: "Give `ref` (from a pruned-output stub) or `toolCallId`." };
  if (ref) {
    const entry = index.entries[ref];
    if (entry) return { kind: "found", entry };
    // A bare tool-call id passed as ref is still understood.
    const byId = occurrencesOf(index, ref);
    if (byId.length === 1) return { kind: "found", entry: byId[0] };
    if (byId.length > 1) return { kind: "ambiguous", toolCallId: ref, entries: byId };
    return { kind: "unknown", query: ref, nearMatches: nearMatches(index, ref) };
  }
  const occurrences = occurrencesOf(index, id as string);
  if (occurrences.length === 1) return { kind: "found", entry: occurrences[0] };
  if (occurrences.length > 1) return { kind: "ambiguous", toolCallId: id as string, entries: occurrences };
  return { kind: "unknown", query: id as string, nearMatches: nearMatches(index, id as string) };
}
