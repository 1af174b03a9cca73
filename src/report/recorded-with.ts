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
 *
 * Its background compaction summaries: an applied one's usage is on Pi's compaction entry (the
 * recorded arm is charged it, `pi-compaction-arm.ts`); one never applied has a spend entry of
 * its own (`src/compaction/spend-entry.ts`), each counted once wherever it is in the file.
 */

import { unappliedSpendOf, type UnappliedSpend } from "../compaction/spend-entry.ts";

export const KEEPER_ENTRY_PREFIX = "context-keeper/";

export interface KeeperRecording {
  recordedWith: "keeper" | "bare";
  /** How many of the keeper's entries the file holds. */
  keeperEntries: number;
  /** Summarizer dollars the keeper's entries recorded (0 under the default extractive summaries). */
  summarizerUsd: number;
  /** The keeper's background compaction summaries it never applied: their calls, tokens and dollars. */
  unappliedCompaction: UnappliedSpend;
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
  return { recordedWith: keeperEntries > 0 ? "keeper" : "bare", keeperEntries, summarizerUsd, unappliedCompaction: unappliedSpendOf(entries) };
}
