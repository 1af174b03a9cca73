/**
 * Pi's compaction flow. `session_before_compact` serves any compaction from a ready job (path
 * 3, and the tail of paths 2 and 4); with a job still pending it cancels Pi's threshold
 * compaction while the context has room, or waits (bounded) for the job
 * (`threshold-decision.ts`) — the host performs the wait and steps the hook again with how
 * it ended —, at Pi's threshold or an overflow no longer than the stall budget, after which a
 * digest takes the late job's place; `session_compact` / `session_compact_failed` report how
 * it ended.
 */
import type { CompactionResult } from "../../compaction/primitives.ts";
import { lateDigestCompaction } from "../../compaction/late-digest.ts";
import { markedDetails, markerOf } from "../../compaction/persistence.ts";
import { messagesBetween, prepareCompaction } from "../../compaction/prepare.ts";
import { type CompactTrigger, decidePendingAtCompact, digestsWhenLate } from "../../compaction/threshold-decision.ts";
import { dispatch, emit, endLateRun, handOffLate, invalidate, readyJob, roomFacts, type StepContext } from "./job.ts";
import { appliedNotice, handoffResult, lateDigestNotice, rejectReady, validateReady } from "./ready.ts";
import type { CompactionEvent, CompactionLive } from "./types.ts";

type BeforeCompact = Extract<CompactionEvent, { type: "compaction-before-compact" }>;

/** `session_before_compact`'s answer. */
export type BeforeCompactAnswer = { cancel: true } | { compaction: CompactionResult } | undefined;

/** Wait (at most `maxWaitMs`, or until Pi's signal aborts) for job `jobId` to leave pending, then step the hook again with `waited`. */
export interface WaitRequest {
  jobId: string;
  maxWaitMs: number;
}

export function beforeCompact(cx: StepContext, live: CompactionLive, event: BeforeCompact): { answer: BeforeCompactAnswer; wait?: WaitRequest } {
  const s = cx.state.job;
  if (event.waited === undefined && s.kind === "pending") {
    const out = pendingAtCompact(cx, live, event, s.job.jobId);
    if (out) return out;
  }
  if (event.waited !== undefined) {
    const cancel = afterWait(cx, live, event);
    if (cancel) return { answer: cancel };
  }
  return { answer: serveReady(cx, live, event) };
}

const contextTokens = (live: CompactionLive, event: BeforeCompact): number => live.usage()?.tokens ?? event.preparation.tokensBefore;

/** A job is still pending as Pi is about to compact: cancel Pi's compaction, wait for the job, or let Pi compact (the job staled). */
function pendingAtCompact(cx: StepContext, live: CompactionLive, event: BeforeCompact, jobId: string): { answer: BeforeCompactAnswer; wait?: WaitRequest } | undefined {
  const tokens = contextTokens(live, event);
  const trigger = event.reason as CompactTrigger;
  const decision = decidePendingAtCompact({
    ...roomFacts(cx, live, tokens),
    reason: trigger,
    customInstructions: Boolean(event.customInstructions?.trim()),
    maxWaitMs: cx.setup.waitMs,
    stallMs: cx.setup.stallMs,
  });
  if (decision.action === "cancel") {
    emit(cx, { kind: "at_compact", jobId, trigger, decision: "cancel", tokens });
    return { answer: { cancel: true } };
  }
  if (decision.action === "wait") {
    cx.state = { ...cx.state, awaitingFor: jobId };
    return { answer: undefined, wait: { jobId, maxWaitMs: decision.maxWaitMs } };
  }
  emit(cx, { kind: "at_compact", jobId, trigger, decision: "fallback", tokens });
  fallBack(cx, jobId);
  return undefined;
}

/** The wait ended: Pi gave up (keep the job), the job is late past the stall budget (a digest now), or go on. */
function afterWait(cx: StepContext, live: CompactionLive, event: BeforeCompact): BeforeCompactAnswer {
  const waited = event.waited!;
  const jobId = cx.state.awaitingFor;
  if (jobId === undefined) return undefined;
  cx.state = { ...cx.state, awaitingFor: undefined };
  const tokens = contextTokens(live, event);
  const trigger = event.reason as CompactTrigger;
  emit(cx, { kind: "at_compact", jobId, trigger, decision: "wait", tokens, waitedMs: waited.waitedMs, waitEnd: waited.waitEnd });
  // Pi gave up its compaction (Esc, shutdown): nothing will replace the job, keep it.
  if (waited.waitEnd === "aborted") return undefined;
  // Late past the stall budget: a digest now, the job's summary upgrades it later.
  if (waited.waitEnd === "timeout" && digestsWhenLate({ reason: trigger, stallMs: cx.setup.stallMs, maxWaitMs: cx.setup.waitMs })) {
    const late = handOverLate(cx, live, event, jobId);
    if (late) return late;
  }
  fallBack(cx, jobId);
  return undefined;
}

/** The job is still pending and Pi compacts on its own: it was computed for a context that will not exist. */
function fallBack(cx: StepContext, jobId: string): void {
  const now = cx.state.job;
  if (now.kind === "pending" && now.job.jobId === jobId) {
    emit(cx, { kind: "apply", jobId, path: "session_before_compact", outcome: "rejected", reason: "sync_fallback" });
    invalidate(cx, "sync_fallback");
  }
}

/** A ready job not handed off yet, validated against the branch Pi compacts: its result for Pi. */
function serveReady(cx: StepContext, live: CompactionLive, event: BeforeCompact): BeforeCompactAnswer {
  const ready = readyJob(cx);
  if (!ready || ready.handoff) return undefined;
  const state = { ready, branch: event.branchEntries, settings: event.preparation.settings };
  const verdict = validateReady(cx, { live, ...state, ...(event.customInstructions !== undefined ? { customInstructions: event.customInstructions } : {}) });
  if (!verdict.ok) {
    rejectReady(cx, { jobId: ready.job.jobId, path: "session_before_compact", reason: verdict.reason });
    return undefined;
  }
  const { summary, firstKeptEntryId, usage, details } = handoffResult(cx, state);
  dispatch(cx, { type: "handed_off", jobId: ready.job.jobId, via: "session_before_compact" });
  emit(cx, { kind: "apply", jobId: ready.job.jobId, path: "session_before_compact", outcome: "handed_off" });
  return { compaction: { summary, firstKeptEntryId, tokensBefore: event.preparation.tokensBefore, details: markedDetails(ready.job, details), usage: usage as never } };
}

/**
 * The digest compaction for Pi's compaction now, with the pending job marked late; undefined
 * when the job is no longer the pending one.
 */
function handOverLate(cx: StepContext, live: CompactionLive, event: BeforeCompact, jobId: string): BeforeCompactAnswer {
  const s = cx.state.job;
  if (s.kind !== "pending" || s.job.jobId !== jobId) return undefined;
  const preparation = event.preparation;
  const primitives = cx.setup.primitives;
  // The previous summary as the next job would read it: a late job's upgrade where one was
  // written — read off the branch as it is now, since an upgrade may have landed during the wait
  // (Pi's event holds the branch from before it).
  const ours = prepareCompaction(live.branch(), preparation.settings, primitives);
  const digest = lateDigestCompaction({ ...preparation, previousSummary: ours?.previousSummary ?? preparation.previousSummary });
  // What the job's summary will not cover once it comes: from its cut to the digest's.
  const gap = messagesBetween(event.branchEntries, s.job.firstKeptEntryId, digest.firstKeptEntryId, primitives) ?? [];
  handOffLate(cx, jobId, { cutEntryId: digest.firstKeptEntryId, gap });
  emit(cx, { kind: "apply", jobId, path: "late_digest", outcome: "handed_off" });
  return {
    compaction: {
      summary: digest.summary,
      firstKeptEntryId: digest.firstKeptEntryId,
      tokensBefore: preparation.tokensBefore,
      details: markedDetails(s.job, { ...digest.details, lateDigest: true }),
    },
  };
}

/** `session_compact`: ours applied (a late digest, or a handed-off job), or someone else's (any job of ours is stale). */
export function compacted(cx: StepContext, event: Extract<CompactionEvent, { type: "compaction-compacted" }>): void {
  cx.state = { ...cx.state, requestedFor: undefined };
  const marker = markerOf(event.entry.details);
  if (event.fromExtension && marker && lateApplied(cx, marker.jobId, event.entry)) return;
  const ready = readyJob(cx);
  if (ready?.handoff && event.fromExtension && marker?.jobId === ready.job.jobId) {
    const jobId = ready.job.jobId;
    dispatch(cx, { type: "applied", jobId });
    emit(cx, { kind: "apply", jobId, path: "session_before_compact", outcome: "applied" });
    cx.effects.push({ kind: "say", text: appliedNotice(cx.setup.adapter.label, event.entry.tokensBefore), level: "info", later: true });
    if (cx.state.autoResumeFor === jobId) {
      cx.state = { ...cx.state, autoResumeFor: undefined };
      cx.effects.push({ kind: "send-user-message", text: "continue", later: true });
    }
    return;
  }
  // Someone else's compaction (Pi's own or another extension's): never claimed, and any
  // job of ours was computed against a context that no longer exists.
  invalidate(cx, "sync_fallback");
}

/** `session_compact` of our digest: the late job now knows the entry its summary will upgrade. */
function lateApplied(cx: StepContext, jobId: string, entry: { id: string; tokensBefore: number }): boolean {
  const late = cx.state.late[jobId];
  if (!late || late.compactionEntryId !== undefined) return false;
  cx.state = { ...cx.state, late: { ...cx.state.late, [jobId]: { ...late, compactionEntryId: entry.id } } };
  emit(cx, { kind: "apply", jobId, path: "late_digest", outcome: "applied" });
  cx.effects.push({ kind: "say", text: lateDigestNotice(cx.setup.adapter.label, entry.tokensBefore), level: "info", later: true });
  return true;
}

/** `session_compact_failed`: our digest did not land, or a handed-off job failed to apply. */
export function compactFailed(cx: StepContext, event: Extract<CompactionEvent, { type: "compaction-compact-failed" }>): void {
  cx.state = { ...cx.state, requestedFor: undefined, autoResumeFor: undefined };
  // Our digest did not land: a late job's summary has nothing to upgrade.
  const lastJob = cx.state.job.kind === "idle" ? cx.state.job.lastJobId : undefined;
  if (event.fromExtension && lastJob && cx.state.late[lastJob]) {
    endLateRun(cx, lastJob, { abort: true });
    emit(cx, { kind: "apply", jobId: lastJob, path: "late_digest", outcome: "failed", error: event.errorMessage ?? "compaction failed" });
    return;
  }
  const ready = readyJob(cx);
  if (!ready?.handoff || !event.fromExtension) return;
  const error = event.errorMessage ?? (event.aborted ? "compaction aborted" : "compaction failed");
  dispatch(cx, { type: "apply_failed", jobId: ready.job.jobId, error });
  emit(cx, { kind: "apply", jobId: ready.job.jobId, path: ready.handoff, outcome: "failed", error });
}
