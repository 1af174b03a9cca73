/**
 * After a Pi compaction the context no longer holds the compacted messages; state about
 * them only costs memory and entry size. This keeps what still refers to a live tool call.
 */
import type { KeeperState, SummaryRecord } from "./schema.ts";

/**
 * `liveOccurrenceKeys`: the occurrence keys of every tool call still in context (see
 * `liveOccurrenceKeys` in `src/prune/occurrence.ts`). Returns the same state object when
 * nothing is dropped.
 */
export function dropStateOutsideContext(state: KeeperState, liveOccurrenceKeys: ReadonlySet<string>): KeeperState {
  const live = (k: string) => liveOccurrenceKeys.has(k);
  const f = state.frontier;

  const stubbedKeys = f.stubbedKeys.filter(live);
  const purgedErrorKeys = f.purgedErrorKeys.filter(live);
  const compressedChains = f.compressedChains.filter((c) => c.memberKeys.some(live));
  const aliasEntries = Object.entries(f.aliases).filter(([k]) => live(k));

  // A summary stays while it covers a live call or a live alias still points into it.
  const aliasTargets = new Set(aliasEntries.map(([, target]) => target));
  const summaryEntries = Object.entries(state.summaries).filter(([, r]) =>
    r.coveredKeys.some((k) => live(k) || aliasTargets.has(k)),
  );

  const unchanged =
    stubbedKeys.length === f.stubbedKeys.length &&
    purgedErrorKeys.length === f.purgedErrorKeys.length &&
    compressedChains.length === f.compressedChains.length &&
    aliasEntries.length === Object.keys(f.aliases).length &&
    summaryEntries.length === Object.keys(state.summaries).length;
  if (unchanged) return state;

  return {
    ...state,
    frontier: {
      ...f,
      stubbedKeys,
      purgedErrorKeys,
      compressedChains,
      aliases: Object.fromEntries(aliasEntries),
    },
    summaries: Object.fromEntries(summaryEntries) as Record<string, SummaryRecord>,
  };
}
