/**
 * Reading flush entries in tests: the frontier after each one (folded the way restore folds
 * them), and the same flushes written the old way (separate summary / full frontier / stats /
 * recall entries), for back-compat fixtures.
 */
import { CUSTOM_TYPE_RECALL } from "../../../src/recall/recall-entries.ts";
import { frontierEntry, statsEntry, summaryEntry, type KeeperEntry } from "../../../src/state/entries.ts";
import { foldFrontier } from "../../../src/state/frontier-fold.ts";
import { CUSTOM_TYPE_FLUSH, emptyFrontier, type FlushRecord, type Frontier } from "../../../src/state/schema.ts";

interface EntryLike {
  type?: string;
  customType?: string;
  data?: unknown;
}

/** The flush records among `entries` (Pi session entries or `KeeperEntry`s), in order. */
export function flushRecordsOf<E extends EntryLike>(entries: readonly E[]): Array<{ entry: E; record: FlushRecord }> {
  return entries.filter((e) => e.customType === CUSTOM_TYPE_FLUSH && (e.type === undefined || e.type === "custom")).map((entry) => ({ entry, record: entry.data as FlushRecord }));
}

/** Each flush entry that moved the frontier, with the full frontier after it (checkpoints replace, deltas fold on). */
export function frontiersAlong<E extends EntryLike>(entries: readonly E[]): Array<{ entry: E; frontier: Frontier }> {
  let fold = foldFrontier(emptyFrontier());
  const out: Array<{ entry: E; frontier: Frontier }> = [];
  for (const { entry, record } of flushRecordsOf(entries)) {
    if (record.frontier) fold = foldFrontier(record.frontier);
    else if (record.frontierDelta && !fold.apply(record.frontierDelta)) throw new Error(`frontier delta from ${record.frontierDelta.from} does not follow flush ${fold.flushSeq()}`);
    else if (!record.frontierDelta) continue;
    out.push({ entry, frontier: fold.frontier() });
  }
  return out;
}

/** The recall deltas the flush entries carry, in order. */
export const recallDeltasOf = <E extends EntryLike>(entries: readonly E[]) => flushRecordsOf(entries).flatMap(({ record }) => (record.recall ? [record.recall] : []));

/** The same flushes as the keeper wrote them before the flush entry: recall, summaries, full frontier, stats. */
export function asLegacyEntries(entries: readonly KeeperEntry[]): Array<{ customType: string; data: unknown }> {
  const frontiers = new Map(frontiersAlong(entries).map(({ entry, frontier }) => [entry, frontier]));
  return flushRecordsOf(entries).flatMap(({ entry, record }) => {
    const frontier = frontiers.get(entry);
    return [
      ...(record.recall ? [{ customType: CUSTOM_TYPE_RECALL, data: record.recall }] : []),
      ...record.summaries.map(summaryEntry),
      ...(frontier ? [frontierEntry(frontier)] : []),
      ...(record.stats ? [statsEntry(record.stats)] : []),
    ];
  });
}
