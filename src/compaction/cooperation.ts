/**
 * Pruning and compaction share one cache: each rewrite of old history costs a full cache
 * write. This is the compaction side's small, pure interface to the pruning budget trigger
 * (the mid-loop flush), so that the two together cost at most one rewrite in a window:
 *
 * - while a job is pending or ready, its apply is imminent and will replace the prefix a
 *   budget flush would rewrite (and re-summarize what the compaction summary covers): hold
 *   the flush;
 * - the same when the context is inside the window where a job starts at this very turn end
 *   (the keeper's handler runs first): the flush and the job's apply would be two rewrites a
 *   few requests apart;
 * - once a job has been handed to Pi, count the budget from the context after the apply,
 *   not from before it (nor from zero), and skip that turn.
 *
 * The request-end flush (the end of a tool loop) is not held: the loop is over.
 */

/** What the pruning side may know about async compaction (`CompactionController.outlook()`). */
export interface CompactionOutlook {
  job: "none" | "pending" | "ready";
  /** Jobs handed to Pi so far in this process (a turn_end draft or a session_before_compact result). */
  handoffs: number;
  /**
   * Context sizes in which a job starts at a turn end (`lower < tokens ≤ upper`), as of the last
   * turn end; absent when none would start (disabled, Pi's compaction off, the last start failed).
   */
  startWindow?: { lower: number; upper: number };
}

export interface BudgetFlushHoldInput {
  /** Undefined when async compaction is off or not registered. */
  outlook: CompactionOutlook | undefined;
  /** `handoffs` when the pruning side last re-based its budget. */
  handoffsSeen: number;
  /** Context tokens now (for `startWindow`); unknown: not compared. */
  contextTokens?: number;
}

export type BudgetFlushHold =
  | { hold: false }
  | { hold: true; why: "compaction_imminent" }
  /** A job starts at this turn end (the context is inside its start window). */
  | { hold: true; why: "compaction_starting" }
  /** Re-base the budget on the current context size and remember `handoffs`. */
  | { hold: true; why: "compaction_applied"; rebaseline: true; handoffs: number };

export function budgetFlushHold(input: BudgetFlushHoldInput): BudgetFlushHold {
  const o = input.outlook;
  if (!o) return { hold: false };
  if (o.handoffs !== input.handoffsSeen) return { hold: true, why: "compaction_applied", rebaseline: true, handoffs: o.handoffs };
  if (o.job === "pending" || o.job === "ready") return { hold: true, why: "compaction_imminent" };
  const t = input.contextTokens;
  if (o.startWindow && t !== undefined && t > o.startWindow.lower && t <= o.startWindow.upper) return { hold: true, why: "compaction_starting" };
  return { hold: false };
}

/**
 * Idle cache warming keeps the current prefix alive; a compaction about to apply discards
 * it (the prefix after it starts with the summary). Turns Pi's "warm" into "stop" while a job
 * is pending or ready; never turns "stop" into "warm".
 */
export function compactionStopsWarming(outlook: CompactionOutlook | undefined, piAction: "warm" | "stop"): boolean {
  return piAction === "warm" && outlook !== undefined && outlook.job !== "none";
}
