/**
 * Pruning and compaction share one cache: each rewrite of old history costs a full cache
 * write. This is the compaction side's small, pure interface to the pruning budget trigger
 * (the mid-loop flush), so that the two together cost at most one rewrite in a window:
 *
 * - a ready summary is applied when the context needs it (`apply-need.ts`: from `applyFrom`,
 *   just below Pi's threshold), and Pi compacts on its own there when no summary is ready: from
 *   that size on a compaction is imminent and replaces the prefix a budget flush would rewrite
 *   (and covers what the flush would summarize), so the flush is held — and from a little
 *   earlier, when the turns left before it are too few for any rewrite to pay back
 *   (`FLUSH_PAYBACK_REQUESTS`);
 * - below it a job pending or ready is no reason to hold: its summary waits for need, and a
 *   flush now pays for itself before that apply as it would with no job at all;
 * - once a job has been handed to Pi, count the budget from the context after the apply,
 *   not from before it (nor from zero), and skip that turn.
 *
 * Before any turn end has worked out `applyFrom`, a pending or ready job holds the flush as
 * before (its apply may be imminent). The request-end flush (the end of a tool loop) is not
 * held: the loop is over.
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
  /**
   * Context size from which a ready summary is applied (Pi's threshold less the margin of
   * `apply-need.ts`), as of the last turn end; absent when nothing compacts on its own.
   */
  applyFrom?: number;
  /** The context's average growth per turn over the recent turns (tokens), as of the last turn end. */
  growthPerTurn?: number;
}

export interface BudgetFlushHoldInput {
  /** Undefined when async compaction is off or not registered. */
  outlook: CompactionOutlook | undefined;
  /** `handoffs` when the pruning side last re-based its budget. */
  handoffsSeen: number;
  /** Context tokens now (compared with `applyFrom`); unknown: not compared. */
  contextTokens?: number;
}

export type BudgetFlushHold =
  | { hold: false }
  /** A compaction applies at this size (a ready summary, or Pi's own), or a job's apply may be imminent (no `applyFrom` known yet). */
  | { hold: true; why: "compaction_imminent" }
  /** Re-base the budget on the current context size and remember `handoffs`. */
  | { hold: true; why: "compaction_applied"; rebaseline: true; handoffs: number };

/**
 * A rewrite that removes as many tokens as it rewrites pays back after write/read price
 * requests: 12.5 at Anthropic's (1.25 and 0.1). With fewer requests left before a compaction
 * replaces the prefix, a budget flush cannot pay: it is held, not run to be deferred by the gate
 * (a deferred flush still moves the frozen boundary over the running loop, which then holds
 * back that loop's own chain at its end).
 */
export const FLUSH_PAYBACK_REQUESTS = 12;

export function budgetFlushHold(input: BudgetFlushHoldInput): BudgetFlushHold {
  const o = input.outlook;
  if (!o) return { hold: false };
  if (o.handoffs !== input.handoffsSeen) return { hold: true, why: "compaction_applied", rebaseline: true, handoffs: o.handoffs };
  const t = input.contextTokens;
  if (o.applyFrom !== undefined && t !== undefined) {
    if (t >= o.applyFrom) return { hold: true, why: "compaction_imminent" };
    const left = requestsUntilCompaction(o, t);
    return left !== undefined && left <= FLUSH_PAYBACK_REQUESTS ? { hold: true, why: "compaction_imminent" } : { hold: false };
  }
  if (o.job === "pending" || o.job === "ready") return { hold: true, why: "compaction_imminent" };
  return { hold: false };
}

/**
 * How many requests a rewrite of old history pays back over before a compaction replaces the
 * prefix anyway: the turns until the context, growing as it has lately, reaches `applyFrom`
 * (at least 1: the request about to be sent). The gate counts no more requests than this
 * (`DisciplineFacts.horizonCap`): a flush that pays back only after the compaction is a second
 * rewrite for nothing. Undefined when no compaction is foreseen (none applies on its own, or the
 * context is not growing).
 */
export function requestsUntilCompaction(outlook: CompactionOutlook | undefined, contextTokens: number | undefined): number | undefined {
  if (!outlook || outlook.applyFrom === undefined || contextTokens === undefined) return undefined;
  const growth = outlook.growthPerTurn;
  if (growth === undefined || !(growth > 0)) return undefined;
  return Math.max(1, Math.ceil((outlook.applyFrom - contextTokens) / growth));
}

/** What a flush being considered leaves to compact: the forecast from the context after it. */
export interface CompactionAfterFlush {
  /** A compaction still applies within the flush's payback (`budgetFlushHold` on the context left). */
  imminent: boolean;
  /** `requestsUntilCompaction` from the context left. */
  requestsLeft: number | undefined;
}

/**
 * The compaction forecast for a flush that removes `tokensRemoved` of `contextTokens`: from the
 * context it would leave, not the one before it. A flush that pushes the foreseen compaction
 * beyond its payback replaces it (one rewrite, no summary call); one that would leave the context
 * still about to compact stays held. A handoff not yet accounted for is not this rule's business
 * (the budget re-bases first), so only the size is re-checked here.
 */
export function compactionAfterFlush(outlook: CompactionOutlook, contextTokens: number, tokensRemoved: number): CompactionAfterFlush {
  const left = Math.max(0, contextTokens - Math.max(0, tokensRemoved));
  const hold = budgetFlushHold({ outlook, handoffsSeen: outlook.handoffs, contextTokens: left });
  return { imminent: hold.hold, requestsLeft: requestsUntilCompaction(outlook, left) };
}

/**
 * Idle cache warming keeps the current prefix alive; a compaction discards it (the prefix after
 * it starts with the summary). While a job is pending or ready its summary is applied once the
 * idle cache has expired (`apply-need.ts`): the next prompt then writes the compacted context,
 * smaller than the one warming would keep. Turns Pi's "warm" into "stop" while a job is pending
 * or ready; never turns "stop" into "warm".
 */
export function compactionStopsWarming(outlook: CompactionOutlook | undefined, piAction: "warm" | "stop"): boolean {
  return piAction === "warm" && outlook !== undefined && outlook.job !== "none";
}
