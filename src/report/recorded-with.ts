/**
 * Was a session recorded with this extension? Its entries say so: the keeper persists its
 * state in Pi `custom` entries whose `customType` starts with `context-keeper/` (a flush, a
 * recall delta, a compaction upgrade, …). Such a recording holds the usage of the requests the
 * keeper sent, and the full history Pi kept (the keeper never changes session messages), so
 * the report replays the keeper as what was paid and bare Pi as the counterfactual.
 *
 * The keeper's summarizer calls are not session messages; their dollars are in the cumulative
 * stats of its flush entries (`summarizerCost`). A session with branches holds one running
 * total per branch: the largest is taken (what the longest branch paid).
 */

export const KEEPER_ENTRY_PREFIX = "context-keeper/";

export interface KeeperRecording {
  recordedWith: "keeper" | "bare";
  /** How many of the keeper's entries the file holds. */
  keeperEntries: number;
  /** Summarizer dollars the keeper's entries recorded (0 under the default extractive summaries). */
  summarizerUsd: number;
}

export function keeperRecordingOf(entries: ReadonlyArray<Record<string, unknown>>): KeeperRecording {
  let keeperEntries = 0;
  let summarizerUsd = 0;
  for (const e of entries) {
    if (e.type !== "custom" || typeof e.customType !== "string" || !e.customType.startsWith(KEEPER_ENTRY_PREFIX)) continue;
    keeperEntries++;
    // A flush entry carries `stats`; older sessions wrote them as their own `context-keeper/stats` entry.
    const data = e.data as { stats?: { summarizerCost?: unknown }; summarizerCost?: unknown } | null | undefined;
    const cost = e.customType === `${KEEPER_ENTRY_PREFIX}stats` ? data?.summarizerCost : data?.stats?.summarizerCost;
    if (typeof cost === "number" && Number.isFinite(cost) && cost > summarizerUsd) summarizerUsd = cost;
  }
  return { recordedWith: keeperEntries > 0 ? "keeper" : "bare", keeperEntries, summarizerUsd };
}
