/**
 * Idle apply (path 2) and abort-and-compact (path 4): when a job becomes ready, or at
 * `agent_end` with a bounded settle retry, `ctx.compact()` is requested once Pi is idle.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { recordLatency } from "../adaptive-start.ts";
import { isSafeIdle } from "../apply-gate.ts";
import { shouldAbortAndCompact } from "../threshold-decision.ts";
import { clearSettleTimer, enterHook } from "./activity.ts";
import { readyJob, type RegistrationContext, roomFacts } from "./context.ts";
import { confirmDraft, persistReady, requestCompact } from "./ready-handoff.ts";

/**
 * The controller's ready callback: record the summary's latency; then apply now if idle,
 * abort-and-compact if over the hard limit with no room left, else defer. Does nothing while
 * `session_before_compact` is waiting for this job (it hands the job over itself).
 */
export function onJobReady(rc: RegistrationContext, jobId: string): void {
  const { controller: c, emit, state } = rc;
  const ready = readyJob(rc);
  if (ready?.job.jobId === jobId) state.pace = recordLatency(state.pace, rc.now() - ready.job.startedAt);
  if (state.awaitingFor === jobId) return;
  const ctx = c.lastCtx;
  if (!ctx || !enterHook(rc, ctx)) return;
  if (isSafeIdle(ctx)) {
    persistReady(rc);
    requestCompact(rc, { ctx, jobId, path: "idle_compact" });
    return;
  }
  const usage = ctx.getContextUsage();
  const settings = rc.options.getCompactionSettings(ctx);
  const abortNow = shouldAbortAndCompact({
    ...roomFacts(rc, ctx, usage?.tokens),
    isIdle: ctx.isIdle(),
    hasPendingMessages: ctx.hasPendingMessages(),
    hasAbortSignal: ctx.signal !== undefined,
    reserveTokens: settings.reserveTokens,
    alreadyTriedForJob: state.abortTriedFor === jobId,
  });
  if (abortNow) {
    state.abortTriedFor = jobId;
    state.autoResumeJobId = jobId;
    if (!requestCompact(rc, { ctx, jobId, path: "abort_and_compact" })) state.autoResumeJobId = undefined;
    return;
  }
  emit({ kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
}

export interface SettleAttempt {
  ctx: ExtensionContext;
  jobId: string;
  attempt: number;
}

/** Poll (first at once, then every `settle.intervalMs`) until Pi is idle, then request the compaction. */
export function scheduleSettle(rc: RegistrationContext, { ctx, jobId, attempt }: SettleAttempt): void {
  const { emit, settle, state } = rc;
  clearSettleTimer(rc);
  state.settleHandle = rc.timers.setTimeout(() => {
    state.settleHandle = undefined;
    const ready = readyJob(rc);
    if (!ready || ready.job.jobId !== jobId || ready.handoff || !enterHook(rc, ctx)) return;
    if (ctx.hasPendingMessages()) return emit({ kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
    if (ctx.isIdle()) {
      requestCompact(rc, { ctx, jobId, path: "idle_compact" });
      return;
    }
    if (attempt + 1 < settle.attempts) scheduleSettle(rc, { ctx, jobId, attempt: attempt + 1 });
    else emit({ kind: "apply", jobId, path: "idle_compact", outcome: "deferred" });
  }, attempt === 0 ? 0 : settle.intervalMs);
}

export function registerAgentEndHook(rc: RegistrationContext): void {
  rc.pi.on("agent_end", (_event, ctx) => {
    if (!enterHook(rc, ctx)) return undefined;
    rc.controller.remember(ctx);
    confirmDraft(rc, ctx);
    const ready = readyJob(rc);
    if (!ready || ready.handoff) return;
    persistReady(rc);
    scheduleSettle(rc, { ctx, jobId: ready.job.jobId, attempt: 0 });
  });
}
