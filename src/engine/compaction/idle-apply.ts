/**
 * A background run's end, idle apply (path 2) and abort-and-compact (path 4): when a job
 * becomes ready, or at `agent_end` with a bounded settle poll (a timer the host delivers),
 * `ctx.compact()` is requested once Pi is idle. A late job's summary (its digest already
 * applied) is written as the digest's upgrade.
 */
import { recordLatency } from "../../compaction/adaptive-start.ts";
import type { ReadyCompaction } from "../../compaction/job-reducer.ts";
import { type LateHandoff, upgradedSummary } from "../../compaction/late-digest.ts";
import { UPGRADE_ENTRY_TYPE, type UpgradeEntry } from "../../compaction/late-digest-entry.ts";
import { shouldAbortAndCompact } from "../../compaction/threshold-decision.ts";
import { runSpendOfUsage, type RunSpend } from "../../compaction/run-spend.ts";
import { clearSettle, dispatch, emit, endedReason, endLateRun, enter, holdSpend, readyJob, recordSpend, roomFacts, SETTLE_TIMER, type StepContext } from "./job.ts";
import { confirmDraft, isSafeIdle, persistReady, requestCompact } from "./ready.ts";
import { armCold, readyIsDue, reportWaiting } from "./need.ts";
import type { CompactionLive } from "./types.ts";

export interface Settled {
  jobId: string;
  result?: ReadyCompaction;
  error?: string;
  now: number;
  /** What the run's summary calls cost (metered); absent: the usage on its result, if any. */
  spend?: RunSpend;
}

/**
 * A run ended: the job is ready (or failed), or a late job's summary came for its upgrade.
 * What its calls cost is held with a ready job (applied, Pi's compaction entry carries it) and
 * recorded at once otherwise: a failed run, a job no longer current, a late job's upgrade.
 */
export function settled(cx: StepContext, live: CompactionLive | undefined, s: Settled): void {
  const spend = s.spend ?? runSpendOfUsage(s.result?.usage);
  const empty = s.result !== undefined && (typeof s.result.summary !== "string" || s.result.summary.trim() === "");
  const error = empty ? "adapter returned an empty summary" : s.error;
  if (s.result && !empty) {
    const late = endLateRun(cx, s.jobId);
    if (late) {
      recordSpend(cx, s.jobId, "late", spend);
      lateResult(cx, live, s.jobId, s.result, late);
    } else if (dispatch(cx, { type: "settled_ok", jobId: s.jobId, result: s.result })) {
      holdSpend(cx, s.jobId, spend);
      jobReady(cx, live, s.jobId, s.now);
    } else recordSpend(cx, s.jobId, endedReason(cx, s.jobId), spend);
    return;
  }
  const message = error ?? "the run ended without a result";
  if (endLateRun(cx, s.jobId)) {
    emit(cx, { kind: "diagnostic", message: `late job ${s.jobId} failed: ${message}; its digest stays` });
    recordSpend(cx, s.jobId, "late", spend);
  } else {
    dispatch(cx, { type: "settled_error", jobId: s.jobId, error: message });
    recordSpend(cx, s.jobId, endedReason(cx, s.jobId), spend);
  }
}

/**
 * A job became ready: record the summary's latency; then, idle, apply it if the context needs
 * it (`apply-need.ts`) or wait for the cache to go cold; busy, abort-and-compact if over the
 * hard limit with no room left, else defer to the turn end. Does nothing while
 * `session_before_compact` is waiting for this job (it hands the job over itself).
 */
function jobReady(cx: StepContext, live: CompactionLive | undefined, jobId: string, now: number): void {
  const ready = readyJob(cx);
  if (ready?.job.jobId === jobId) cx.state = { ...cx.state, pace: recordLatency(cx.state.pace, now - ready.job.startedAt) };
  if (cx.state.awaitingFor === jobId) return;
  if (!live || !enter(cx, live)) return;
  if (isSafeIdle(live)) {
    persistReady(cx);
    applyWhenDue(cx, live, jobId, () => void requestCompact(cx, live, { jobId, path: "idle_compact" }));
    return;
  }
  const usage = live.usage();
  const settings = live.settings();
  const abortNow = shouldAbortAndCompact({
    ...roomFacts(cx, live, usage?.tokens),
    isIdle: live.idle(),
    hasPendingMessages: live.pendingMessages(),
    hasAbortSignal: live.streaming,
    reserveTokens: settings.reserveTokens,
    alreadyTriedForJob: cx.state.abortTriedFor === jobId,
  });
  if (abortNow) {
    cx.state = { ...cx.state, abortTriedFor: jobId, autoResumeFor: jobId };
    if (!requestCompact(cx, live, { jobId, path: "abort_and_compact" })) cx.state = { ...cx.state, autoResumeFor: undefined };
    return;
  }
  emit(cx, { kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
}

/** The late job's summary came: written as the upgrade of the digest Pi applied (when Pi reported it). */
function lateResult(cx: StepContext, live: CompactionLive | undefined, jobId: string, result: ReadyCompaction, late: LateHandoff): void {
  if (!late.compactionEntryId) {
    emit(cx, { kind: "diagnostic", message: `late job ${jobId}: its digest was never reported applied; the summary is dropped` });
    return;
  }
  // Written on the branch that holds the digest only (after a /tree move elsewhere it would be an orphan).
  const branch = live?.branch();
  if (branch && !branch.some((e) => e.id === late.compactionEntryId)) {
    emit(cx, { kind: "diagnostic", message: `late job ${jobId}: its digest is not on the current branch; the summary is dropped` });
    return;
  }
  const data: UpgradeEntry = { version: 1, compactionEntryId: late.compactionEntryId, jobId, summary: upgradedSummary(result, late) };
  cx.effects.push({ kind: "compaction-upgrade", jobId, customType: UPGRADE_ENTRY_TYPE, data });
}

/** The upgrade entry was written, or why not. */
export function upgradeWritten(cx: StepContext, jobId: string, error: string | undefined): void {
  if (error === undefined) emit(cx, { kind: "apply", jobId, path: "late_digest", outcome: "upgraded" });
  else emit(cx, { kind: "diagnostic", message: `late job ${jobId}: the upgrade was not written (${error})` });
}

/** Poll (first at once, then every `settle.intervalMs`) until Pi is idle, then request the compaction. */
export function scheduleSettle(cx: StepContext, jobId: string, attempt: number): void {
  clearSettle(cx);
  cx.state = { ...cx.state, settle: { jobId, attempt } };
  cx.effects.push({ kind: "timer-set", key: SETTLE_TIMER, ms: attempt === 0 ? 0 : cx.setup.settle.intervalMs });
}

/** The settle timer fired. */
export function settleTick(cx: StepContext, live: CompactionLive): void {
  const armed = cx.state.settle;
  cx.state = { ...cx.state, settle: undefined };
  if (!armed) return;
  const { jobId, attempt } = armed;
  const ready = readyJob(cx);
  if (!ready || ready.job.jobId !== jobId || ready.handoff || !enter(cx, live)) return;
  if (live.pendingMessages()) return emit(cx, { kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
  if (live.idle()) {
    requestCompact(cx, live, { jobId, path: "idle_compact" });
    return;
  }
  if (attempt + 1 < cx.setup.settle.attempts) scheduleSettle(cx, jobId, attempt + 1);
  else emit(cx, { kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
}

/** `agent_end`: persist a ready summary; apply it once Pi is idle if the context needs it, else once the idle cache is cold. */
export function agentEnd(cx: StepContext, live: CompactionLive): void {
  confirmDraft(cx, live);
  cx.state = { ...cx.state, lastActivityAt: live.now };
  const ready = readyJob(cx);
  if (!ready || ready.handoff) return;
  persistReady(cx);
  const jobId = ready.job.jobId;
  applyWhenDue(cx, live, jobId, () => scheduleSettle(cx, jobId, 0));
}

/** Idle with a ready summary: `apply` now if it is due (asked for, or the context needs it); otherwise it waits, applied when the cache has gone cold (a timer) or at the next need. */
export function applyWhenDue(cx: StepContext, live: CompactionLive, jobId: string, apply: () => void): void {
  const ready = readyJob(cx);
  if (ready?.job.jobId === jobId && readyIsDue(cx, live, ready)) return apply();
  reportWaiting(cx, jobId, "idle_compact");
  armCold(cx, live);
}
