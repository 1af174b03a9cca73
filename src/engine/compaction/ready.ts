/**
 * Handing a ready job to Pi, the steps every apply path shares: validation against the live
 * session, rejection, confirming a `turn_end` draft, persisting the ready summary, and
 * asking Pi to compact (`ctx.compact()`, an effect).
 */
import { isSafeIdle, validateAgainstLive } from "../../compaction/apply-gate.ts";
import { catchUpResult } from "../../compaction/catch-up.ts";
import type { InvalidationReason, ReadyCompaction } from "../../compaction/job-reducer.ts";
import type { ApplyPath } from "../../compaction/lifecycle.ts";
import { markerOf, READY_ENTRY_TYPE, readyEntryData } from "../../compaction/persistence.ts";
import type { CompactionSettings, SessionEntry } from "../../compaction/primitives.ts";
import { dispatch, emit, invalidate, readyJob, type StepContext } from "./job.ts";
import type { CompactionLive, ReadyJob } from "./types.ts";

export interface ValidateReadyInput {
  live: CompactionLive;
  ready: ReadyJob;
  branch: SessionEntry[];
  settings: CompactionSettings;
  customInstructions?: string;
}

/** The checks of `validate.ts` on the job as computed; the size check on the result as it will be applied (caught up). */
export function validateReady(cx: StepContext, input: ValidateReadyInput) {
  const { live, ready, branch, settings, customInstructions } = input;
  const primitives = cx.setup.primitives;
  const applied = catchUpResult({ branch, result: ready.result, settings, primitives }).result;
  return validateAgainstLive({
    live: { sessionId: live.sessionId, modelKey: live.modelKey, contextWindow: live.model?.contextWindow ?? live.usage()?.contextWindow ?? 0 },
    snapshot: ready.job,
    result: ready.result,
    applied,
    branch,
    settings,
    thinkingLevel: live.thinkingLevel,
    customInstructions,
    primitives,
    ...(cx.sent ? { sentContext: cx.sent } : {}),
  });
}

/**
 * The result handed to Pi for a validated ready job: its cut moved up to Pi's cut now, the gap
 * digested (`catch-up.ts`), so the tail kept after the apply is no larger than Pi's own.
 */
export function handoffResult(cx: StepContext, input: Pick<ValidateReadyInput, "ready" | "branch" | "settings">): ReadyCompaction {
  const { ready, branch, settings } = input;
  const caught = catchUpResult({ branch, result: ready.result, settings, primitives: cx.setup.primitives });
  if (caught.movedFrom) {
    emit(cx, { kind: "catch_up", jobId: ready.job.jobId, fromEntryId: caught.movedFrom, toEntryId: caught.result.firstKeptEntryId, gapMessages: caught.gapMessages });
  }
  return caught.result;
}

export function rejectReady(cx: StepContext, rejection: { jobId: string; path: ApplyPath; reason: InvalidationReason }): void {
  const { jobId, path, reason } = rejection;
  emit(cx, { kind: "apply", jobId, path, outcome: "rejected", reason });
  invalidate(cx, reason);
}

const contextWas = (tokensBefore: number | undefined): string =>
  typeof tokensBefore === "number" && tokensBefore > 0 ? ` (context was ${tokensBefore.toLocaleString("en-US")} tokens)` : "";

/** The one-line notice when a background summary is applied. */
export function appliedNotice(label: string, tokensBefore: number | undefined): string {
  return `${label}: applied a background summary${contextWas(tokensBefore)}`;
}

/** The notice when a late job's digest is applied in its place (`late-digest.ts`). */
export function lateDigestNotice(label: string, tokensBefore: number | undefined): string {
  return `${label}: the background summary was not ready; applied an extractive digest${contextWas(tokensBefore)}. The summary upgrades it when it comes.`;
}

/** A `turn_end` draft is committed right after the handlers; confirm it at the next hook. */
export function confirmDraft(cx: StepContext, live: CompactionLive): void {
  const ready = readyJob(cx);
  if (!ready || ready.handoff !== "turn_end_draft") return;
  const jobId = ready.job.jobId;
  const entry = live.branch().find((e) => e.type === "compaction" && markerOf(e.details)?.jobId === jobId);
  if (entry) {
    dispatch(cx, { type: "applied", jobId });
    emit(cx, { kind: "apply", jobId, path: "turn_end_draft", outcome: "applied" });
    cx.effects.push({ kind: "say", text: appliedNotice(cx.setup.adapter.label, entry.type === "compaction" ? entry.tokensBefore : undefined), level: "info" });
  } else {
    const error = "turn_end compaction draft was not persisted";
    dispatch(cx, { type: "apply_failed", jobId, error });
    emit(cx, { kind: "apply", jobId, path: "turn_end_draft", outcome: "failed", error });
  }
}

/** Write the ready summary as a custom entry so it survives a restart (once per job). */
export function persistReady(cx: StepContext): void {
  const ready = readyJob(cx);
  if (!ready || ready.persisted || ready.handoff || !cx.setup.persistReady) return;
  cx.effects.push({ kind: "append", entries: [{ customType: READY_ENTRY_TYPE, data: readyEntryData(ready.job, ready.result) }] });
  dispatch(cx, { type: "persisted", jobId: ready.job.jobId });
}

/**
 * Ask Pi to compact (at most one request in flight per job); `session_before_compact` serves it.
 * The ready job is re-validated first: a stale one is rejected here, so Pi never runs a
 * blocking compaction of its own that nobody asked for. Returns whether Pi was asked.
 */
export function requestCompact(cx: StepContext, live: CompactionLive, request: { jobId: string; path: ApplyPath }): boolean {
  const { jobId, path } = request;
  if (cx.state.requestedFor === jobId) return false;
  const ready = readyJob(cx);
  if (!ready || ready.job.jobId !== jobId || ready.handoff) return false;
  const verdict = validateReady(cx, { live, ready, branch: live.branch(), settings: live.settings() });
  if (!verdict.ok) {
    rejectReady(cx, { jobId, path, reason: verdict.reason });
    return false;
  }
  cx.state = { ...cx.state, requestedFor: jobId };
  emit(cx, { kind: "apply", jobId, path, outcome: "requested" });
  cx.effects.push({ kind: "compaction-request", jobId, path });
  return true;
}

/** `ctx.compact()` failed: the handed-off job failed to apply. */
export function requestFailed(cx: StepContext, input: { jobId: string; path: ApplyPath; error: string }): void {
  cx.state = { ...cx.state, requestedFor: undefined };
  const ready = readyJob(cx);
  if (ready?.job.jobId === input.jobId && ready.handoff) {
    dispatch(cx, { type: "apply_failed", jobId: input.jobId, error: input.error });
    emit(cx, { kind: "apply", jobId: input.jobId, path: input.path, outcome: "failed", error: input.error });
  }
}

export { isSafeIdle };
