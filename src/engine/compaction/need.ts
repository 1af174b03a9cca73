/**
 * Whether a ready summary is due now (`apply-need.ts`: near Pi's threshold, or the cache cold
 * anyway), over the live session's facts; the cold timer that applies a waiting summary while
 * Pi is idle once the cache has expired; and how far behind a waiting summary's cut is (its
 * refresh, `turn-end.ts`).
 */
import { growthPerTurn, maxTurnGrowth } from "../../compaction/adaptive-start.ts";
import { type ApplyNeed, applyFromTokens, applyNeed, cacheIsCold, msUntilCold } from "../../compaction/apply-need.ts";
import { catchUpCut } from "../../compaction/prepare.ts";
import type { SessionEntry } from "../../compaction/primitives.ts";
import { emit, readyJob, type StepContext } from "./job.ts";
import { isSafeIdle, requestCompact } from "./ready.ts";
import type { CompactionLive, ReadyJob } from "./types.ts";

export const COLD_TIMER = "compaction:cold";

/** The newest assistant message's time on the branch (a resumed session's last request). */
function lastAssistantAt(branch: readonly SessionEntry[]): number | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as { type: string; message?: { role?: string; timestamp?: unknown } };
    if (e.type === "message" && e.message?.role === "assistant" && typeof e.message.timestamp === "number") return e.message.timestamp;
  }
  return undefined;
}

/**
 * When the cached prefix was last used: the keeper's ledger (every request and warming refresh
 * it saw), else the last turn or run end this part saw, else the branch's last answer.
 */
export function lastCacheUse(cx: StepContext, live: CompactionLive): number | undefined {
  const seen = [cx.lastRequestAt, cx.state.lastActivityAt].filter((t): t is number => t !== undefined);
  if (seen.length > 0) return Math.max(...seen);
  return lastAssistantAt(live.branch());
}

function cacheClock(cx: StepContext, live: CompactionLive) {
  return { lastUseAt: lastCacheUse(cx, live), now: live.now, ttlMs: live.cacheTtlMs };
}

/** Whether a ready summary applies now. */
export function applyDue(cx: StepContext, live: CompactionLive): ApplyNeed {
  const usage = live.usage();
  return applyNeed({
    tokens: usage?.tokens,
    contextWindow: usage?.contextWindow ?? live.model?.contextWindow ?? 0,
    reserveTokens: live.settings().reserveTokens,
    maxTurnGrowth: maxTurnGrowth(cx.state.pace),
    cacheCold: cacheIsCold(cacheClock(cx, live)),
  });
}

/**
 * Whether this ready summary applies now: one the user asked for (`/async-compact-now`, a manual
 * job) at once — the request is the need —, an automatic one when `applyDue` says so.
 */
export function readyIsDue(cx: StepContext, live: CompactionLive, ready: ReadyJob): boolean {
  return ready.job.manual || applyDue(cx, live).due;
}

/** The context size from which a ready summary applies, for the pruning side's outlook (undefined: no automatic compaction). */
export function recordApplyFrom(cx: StepContext, live: CompactionLive, contextWindow: number | undefined): void {
  const settings = live.settings();
  const applyFrom = cx.setup.config.enabled && settings.enabled !== false && contextWindow ? applyFromTokens({ contextWindow, reserveTokens: settings.reserveTokens, maxTurnGrowth: maxTurnGrowth(cx.state.pace) }) : undefined;
  const growth = growthPerTurn(cx.state.pace);
  if (applyFrom !== cx.state.applyFrom || growth !== cx.state.growthPerTurn) cx.state = { ...cx.state, applyFrom, growthPerTurn: applyFrom === undefined ? undefined : growth };
}

/** A ready summary waits for need: said once per job. */
export function reportWaiting(cx: StepContext, jobId: string, path: "turn_end_draft" | "idle_compact"): void {
  if (cx.state.waitingFor === jobId) return;
  cx.state = { ...cx.state, waitingFor: jobId };
  emit(cx, { kind: "apply", jobId, path, outcome: "waiting" });
}

/** Idle with a summary waiting: apply it once the cache has expired (a timer; none when the lifetime is unknown). */
export function armCold(cx: StepContext, live: CompactionLive): void {
  const ms = msUntilCold(cacheClock(cx, live));
  if (ms === undefined) return;
  cx.effects.push({ kind: "timer-set", key: COLD_TIMER, ms });
}

export function clearCold(cx: StepContext): void {
  cx.effects.push({ kind: "timer-clear", key: COLD_TIMER });
}

/** The cold timer fired: a waiting summary is applied while Pi is idle, if the cache is cold by now. */
export function coldTick(cx: StepContext, live: CompactionLive): void {
  const ready = readyJob(cx);
  if (!ready || ready.handoff || !isSafeIdle(live)) return;
  if (!cacheIsCold(cacheClock(cx, live))) return armCold(cx, live);
  requestCompact(cx, live, { jobId: ready.job.jobId, path: "idle_compact" });
}

/**
 * How far behind a ready summary is, in tokens of the raw branch: the gap between its cut and
 * Pi's cut now (what the catch-up digest would stand for), and what the summary covers before
 * its cut since the newest compaction.
 */
export function summaryLag(cx: StepContext, live: CompactionLive, ready: ReadyJob): { gapTokens: number; coveredTokens: number } {
  const cut = catchUpCut(live.branch(), ready.result.firstKeptEntryId, live.settings().keepRecentTokens, cx.setup.primitives);
  if (!cut) return { gapTokens: 0, coveredTokens: 0 };
  const tokens = (messages: readonly unknown[]) => messages.reduce<number>((n, m) => n + cx.setup.primitives.estimateTokens(m as never), 0);
  return { gapTokens: tokens(cut.gapMessages), coveredTokens: tokens(cut.coveredMessages) };
}
