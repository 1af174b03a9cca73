/**
 * The session around the job: `session_start` drops a job from another session and reads back
 * a stored ready summary (revalidated before it may become ready: a failing one goes straight
 * to stale with its reason; a valid one is applied once Pi is idle if the context needs it or
 * the cache is cold, else it waits for need like any ready one); `session_shutdown` writes
 * an unsaved one and cancels the rest, recording what every summary not applied cost (the
 * ready one's, and each run still in flight's so far: no write is possible once the session
 * is gone); a different model, a different thinking level, or a
 * tree move that drops the job's anchors make a job stale.
 */
import { branchInfo } from "../../compaction/apply-gate.ts";
import type { InvalidationReason } from "../../compaction/job-reducer.ts";
import { findStoredReady } from "../../compaction/persistence.ts";
import { validateBranchAnchors } from "../../compaction/validate.ts";
import type { ReadyCompaction } from "../../compaction/job-reducer.ts";
import { runSpendOfUsage, type RunSpend } from "../../compaction/run-spend.ts";
import { spendRecorded } from "../../compaction/spend-entry.ts";
import { activeJob, clearSettle, dispatch, emit, endLateRun, holdSpend, invalidate, JOB_TIMER, recordSpend, statusKey, type StepContext } from "./job.ts";
import { applyWhenDue, scheduleSettle } from "./idle-apply.ts";
import { clearCold } from "./need.ts";
import { persistReady, validateReady } from "./ready.ts";
import type { CompactionLive, ReadyJob } from "./types.ts";

export function sessionStart(cx: StepContext, live: CompactionLive): void {
  const job = activeJob(cx);
  if (job && job.sessionId !== live.sessionId) invalidate(cx, "session_changed");
  if (activeJob(cx) || !cx.setup.config.enabled) return;
  restoreStoredReady(cx, live);
}

function withoutUsage(result: ReadyCompaction): ReadyCompaction {
  const { usage: _recorded, ...rest } = result;
  return rest;
}

function restoreStoredReady(cx: StepContext, live: CompactionLive): void {
  const branch = live.branch();
  const stored = findStoredReady(branch, cx.setup.adapter.id);
  if (!stored || stored.appliedSince) return;
  const { snapshot } = stored.data;
  // Recorded at the shutdown that left it waiting: applied now, Pi's entry must not carry that spend again.
  const recorded = spendRecorded(branch, snapshot.jobId);
  const result = recorded ? withoutUsage(stored.data.result) : stored.data.result;
  const spend = recorded ? undefined : runSpendOfUsage(result.usage);
  const candidate: ReadyJob = { kind: "ready", job: snapshot, result, persisted: true };
  // A compaction after the stored entry changed the context the summary was made for.
  const verdict: { ok: true } | { ok: false; reason: InvalidationReason } = stored.compactedSince
    ? { ok: false, reason: "sync_fallback" }
    : validateReady(cx, { live, ready: candidate, branch, settings: live.settings() });
  if (!verdict.ok) {
    if (dispatch(cx, { type: "restored", job: snapshot, result, staleReason: verdict.reason })) {
      emit(cx, { kind: "apply", jobId: snapshot.jobId, path: "restore", outcome: "rejected", reason: verdict.reason });
      recordSpend(cx, snapshot.jobId, verdict.reason, spend);
    }
    return;
  }
  if (!dispatch(cx, { type: "restored", job: snapshot, result })) return;
  holdSpend(cx, snapshot.jobId, spend);
  emit(cx, { kind: "apply", jobId: snapshot.jobId, path: "restore", outcome: "deferred" });
  applyWhenDue(cx, live, snapshot.jobId, () => scheduleSettle(cx, snapshot.jobId, 0));
}

/**
 * Session shutdown: a ready summary never written survives the restart; work cancelled, the
 * status line cleared; what the summaries not applied cost recorded (the ready one's when it is
 * cancelled, `dispatch`; the runs in flight's so far, as the host measured them).
 */
export function sessionShutdown(cx: StepContext, live: CompactionLive, inFlight: Readonly<Record<string, RunSpend>>): void {
  clearSettle(cx);
  clearCold(cx);
  if (live.active) persistReady(cx);
  invalidate(cx, "cancelled");
  for (const [jobId, spend] of Object.entries(inFlight)) recordSpend(cx, jobId, "shutdown", spend);
  for (const jobId of Object.keys(cx.state.late)) endLateRun(cx, jobId, { abort: true });
  const running = cx.state.running;
  if (running !== undefined) {
    cx.effects.push({ kind: "timer-clear", key: JOB_TIMER }, { kind: "compaction-abort", jobId: running });
    cx.state = { ...cx.state, running: undefined };
  }
  if (cx.state.status !== undefined) {
    cx.state = { ...cx.state, status: undefined };
    cx.effects.push({ kind: "status", key: statusKey(cx.setup), text: undefined });
  }
}

/** `model_select`: `modelKey` is `modelKeyOf` the model chosen. */
export function modelSelected(cx: StepContext, modelKey: string): void {
  const job = activeJob(cx);
  if (job && modelKey !== job.modelKey) invalidate(cx, "model_changed");
}

export function thinkingSelected(cx: StepContext, level: string): void {
  const job = activeJob(cx);
  if (job && level !== job.thinkingLevel) invalidate(cx, "thinking_changed");
}

export function treeMoved(cx: StepContext, live: CompactionLive): void {
  const job = activeJob(cx);
  if (!job) return;
  const verdict = validateBranchAnchors(job, branchInfo(live.branch()));
  if (!verdict.ok) invalidate(cx, verdict.reason);
}
