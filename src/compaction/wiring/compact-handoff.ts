/**
 * Pi's compaction flow: `session_before_compact` serves any compaction from a ready job
 * (path 3, and the tail of paths 2 and 4); with a job still pending it cancels Pi's threshold
 * compaction while the context has room, or waits (bounded) for the job
 * (`threshold-decision.ts`) — at Pi's threshold or an overflow no longer than the stall budget,
 * after which a digest takes the late job's place (`late-handoff.ts`);
 * `session_compact` / `session_compact_failed` report how it ended.
 */
import type { ExtensionContext, SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";
import { markedDetails, markerOf } from "../persistence.ts";
import type { CompactionResult } from "../primitives.ts";
import { type CompactTrigger, decidePendingAtCompact } from "../threshold-decision.ts";
import { enterHook } from "./activity.ts";
import { readyJob, type RegistrationContext, roomFacts } from "./context.ts";
import { appliedNotice, sayAfterCompaction } from "./notify.ts";
import { handOverLate, recordLateApplied } from "./late-handoff.ts";
import { confirmDraft, handoffResult, rejectReady, validateReady } from "./ready-handoff.ts";

export function registerCompactHandoffHooks(rc: RegistrationContext): void {
  registerBeforeCompact(rc);
  registerCompactDone(rc);
  registerCompactFailed(rc);
}

function registerBeforeCompact(rc: RegistrationContext): void {
  const { controller: c, emit } = rc;
  rc.pi.on("session_before_compact", async (event, ctx) => {
    if (!enterHook(rc, ctx)) return undefined;
    c.remember(ctx);
    confirmDraft(rc, ctx);
    const s = c.current;
    if (s.kind === "pending") {
      const cancel = await settlePending(rc, { event, ctx, jobId: s.job.jobId });
      if (cancel) return cancel;
    }
    const ready = readyJob(rc);
    if (!ready || ready.handoff) return undefined;
    const live = { ready, branch: event.branchEntries, settings: event.preparation.settings };
    const verdict = validateReady(rc, { ctx, ...live, customInstructions: event.customInstructions });
    if (!verdict.ok) {
      rejectReady(rc, { jobId: ready.job.jobId, path: "session_before_compact", reason: verdict.reason });
      return undefined;
    }
    const { summary, firstKeptEntryId, usage, details } = handoffResult(rc, live);
    c.dispatch({ type: "handed_off", jobId: ready.job.jobId, via: "session_before_compact" });
    emit({ kind: "apply", jobId: ready.job.jobId, path: "session_before_compact", outcome: "handed_off" });
    return {
      compaction: { summary, firstKeptEntryId, tokensBefore: event.preparation.tokensBefore, details: markedDetails(ready.job, details), usage: usage as never },
    };
  });
}

interface PendingAtCompact {
  event: SessionBeforeCompactEvent;
  ctx: ExtensionContext;
  jobId: string;
}

/**
 * A job is still pending as Pi is about to compact: cancel Pi's compaction (returned), or wait
 * for the job (it may be ready afterwards), or let Pi compact on its own (the job is staled).
 */
async function settlePending(rc: RegistrationContext, { event, ctx, jobId }: PendingAtCompact): Promise<{ cancel: true } | { compaction: CompactionResult } | undefined> {
  const { controller: c, emit, state } = rc;
  const usage = ctx.getContextUsage();
  const tokens = usage?.tokens ?? event.preparation.tokensBefore;
  const trigger = event.reason as CompactTrigger;
  const decision = decidePendingAtCompact({
    ...roomFacts(rc, ctx, tokens),
    reason: trigger,
    customInstructions: Boolean(event.customInstructions?.trim()),
    maxWaitMs: rc.waitMs,
    stallMs: rc.stallMs,
  });
  if (decision.action === "cancel") {
    emit({ kind: "at_compact", jobId, trigger, decision: "cancel", tokens });
    return { cancel: true };
  }
  if (decision.action === "wait") {
    const from = rc.now();
    state.awaitingFor = jobId;
    const waitEnd = await c.waitUntilSettled(jobId, decision.maxWaitMs, event.signal);
    if (state.awaitingFor === jobId) state.awaitingFor = undefined;
    emit({ kind: "at_compact", jobId, trigger, decision: "wait", tokens, waitedMs: rc.now() - from, waitEnd });
    // Pi gave up its compaction (Esc, shutdown): nothing will replace the job, keep it.
    if (waitEnd === "aborted") return undefined;
    // Late past the stall budget: a digest now, the job's summary upgrades it later.
    if (waitEnd === "timeout" && decision.digestAfterMs !== undefined) {
      const late = handOverLate(rc, { event, jobId });
      if (late) return late;
    }
  } else {
    emit({ kind: "at_compact", jobId, trigger, decision: "fallback", tokens });
  }
  const now = c.current;
  if (now.kind === "pending" && now.job.jobId === jobId) {
    emit({ kind: "apply", jobId, path: "session_before_compact", outcome: "rejected", reason: "sync_fallback" });
    c.invalidate("sync_fallback");
  }
  return undefined;
}

function registerCompactDone(rc: RegistrationContext): void {
  const { controller: c, emit, state } = rc;
  rc.pi.on("session_compact", (event, ctx) => {
    if (!enterHook(rc, ctx)) return undefined;
    c.remember(ctx);
    state.compactRequestedFor = undefined;
    const marker = markerOf(event.compactionEntry.details);
    if (event.fromExtension && marker && recordLateApplied(rc, { ctx, jobId: marker.jobId, compactionEntryId: event.compactionEntry.id, tokensBefore: event.compactionEntry.tokensBefore })) return;
    const ready = readyJob(rc);
    if (ready?.handoff && event.fromExtension && marker?.jobId === ready.job.jobId) {
      const jobId = ready.job.jobId;
      c.dispatch({ type: "applied", jobId });
      emit({ kind: "apply", jobId, path: "session_before_compact", outcome: "applied" });
      sayAfterCompaction(rc, ctx, appliedNotice(rc.adapter.label, event.compactionEntry.tokensBefore));
      if (state.autoResumeJobId === jobId) {
        state.autoResumeJobId = undefined;
        rc.timers.setTimeout(() => rc.pi.sendUserMessage("continue"), 0);
      }
      return;
    }
    // Someone else's compaction (Pi's own or another extension's): never claimed, and any
    // job of ours was computed against a context that no longer exists.
    c.invalidate("sync_fallback");
  });
}

function registerCompactFailed(rc: RegistrationContext): void {
  const { controller: c, emit, state } = rc;
  rc.pi.on("session_compact_failed", (event, ctx) => {
    if (!enterHook(rc, ctx)) return;
    state.compactRequestedFor = undefined;
    state.autoResumeJobId = undefined;
    // Our digest did not land: a late job's summary has nothing to upgrade.
    const lastJob = c.current.kind === "idle" ? c.current.lastJobId : undefined;
    if (event.fromExtension && lastJob && c.isLate(lastJob)) {
      c.endLateRun(lastJob, { abort: true });
      emit({ kind: "apply", jobId: lastJob, path: "late_digest", outcome: "failed", error: event.errorMessage ?? "compaction failed" });
      return;
    }
    const ready = readyJob(rc);
    if (!ready?.handoff || !event.fromExtension) return;
    const error = event.errorMessage ?? (event.aborted ? "compaction aborted" : "compaction failed");
    c.dispatch({ type: "apply_failed", jobId: ready.job.jobId, error });
    emit({ kind: "apply", jobId: ready.job.jobId, path: ready.handoff, outcome: "failed", error });
  });
}
