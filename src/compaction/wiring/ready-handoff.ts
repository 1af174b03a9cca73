/**
 * Shared steps for handing a ready job to Pi: validation against the live context,
 * rejection, draft confirmation, persistence and the `ctx.compact()` request.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { validateAgainstLive } from "../apply-gate.ts";
import { catchUpResult } from "../catch-up.ts";
import type { InvalidationReason, ReadyCompaction } from "../job-reducer.ts";
import type { ApplyPath } from "../lifecycle.ts";
import { markerOf, READY_ENTRY_TYPE, readyEntryData } from "../persistence.ts";
import type { CompactionSettings, SessionEntry } from "../primitives.ts";
import type { ReadyJobState } from "../restore.ts";
import { readyJob, type RegistrationContext, thinkingOf } from "./context.ts";
import { noticeApplied } from "./notify.ts";

export interface ValidateReadyInput {
  ctx: ExtensionContext;
  ready: ReadyJobState;
  branch: SessionEntry[];
  settings: CompactionSettings;
  customInstructions?: string;
}

/** The checks of `validate.ts` on the job as computed; the size check on the result as it will be applied (caught up). */
export function validateReady(rc: RegistrationContext, input: ValidateReadyInput) {
  const { ctx, ready, branch, settings, customInstructions } = input;
  const applied = catchUpResult({ branch, result: ready.result, settings, primitives: rc.options.primitives }).result;
  return validateAgainstLive({ ctx, snapshot: ready.job, result: ready.result, applied, branch, settings, thinkingLevel: thinkingOf(rc, ctx), customInstructions, primitives: rc.options.primitives, sentContext: rc.options.sentContext });
}

/**
 * The result handed to Pi for a validated ready job: its cut moved up to Pi's cut now, the gap
 * digested (`catch-up.ts`), so the tail kept after the apply is no larger than Pi's own.
 */
export function handoffResult(rc: RegistrationContext, input: Omit<ValidateReadyInput, "ctx" | "customInstructions">): ReadyCompaction {
  const { ready, branch, settings } = input;
  const caught = catchUpResult({ branch, result: ready.result, settings, primitives: rc.options.primitives });
  if (caught.movedFrom) {
    rc.emit({ kind: "catch_up", jobId: ready.job.jobId, fromEntryId: caught.movedFrom, toEntryId: caught.result.firstKeptEntryId, gapMessages: caught.gapMessages });
  }
  return caught.result;
}

export function rejectReady(rc: RegistrationContext, rejection: { jobId: string; path: ApplyPath; reason: InvalidationReason }): void {
  const { jobId, path, reason } = rejection;
  rc.emit({ kind: "apply", jobId, path, outcome: "rejected", reason });
  rc.controller.invalidate(reason);
}

/** A `turn_end` draft is committed right after the handlers; confirm it at the next hook. */
export function confirmDraft(rc: RegistrationContext, ctx: ExtensionContext): void {
  const ready = readyJob(rc);
  if (!ready || ready.handoff !== "turn_end_draft") return;
  const jobId = ready.job.jobId;
  const entry = ctx.sessionManager.getBranch().find((e) => e.type === "compaction" && markerOf(e.details)?.jobId === jobId);
  if (entry) {
    rc.controller.dispatch({ type: "applied", jobId });
    rc.emit({ kind: "apply", jobId, path: "turn_end_draft", outcome: "applied" });
    noticeApplied(rc, ctx, entry.type === "compaction" ? entry.tokensBefore : undefined);
  } else {
    const error = "turn_end compaction draft was not persisted";
    rc.controller.dispatch({ type: "apply_failed", jobId, error });
    rc.emit({ kind: "apply", jobId, path: "turn_end_draft", outcome: "failed", error });
  }
}

/** Write the ready summary as a custom entry so it survives a restart (once per job). */
export function persistReady(rc: RegistrationContext): void {
  const ready = readyJob(rc);
  if (!ready || ready.persisted || ready.handoff || rc.options.persistReady === false) return;
  rc.pi.appendEntry(READY_ENTRY_TYPE, readyEntryData(ready.job, ready.result));
  rc.controller.dispatch({ type: "persisted", jobId: ready.job.jobId });
}

/**
 * Ask Pi to compact (at most one request in flight per job); `session_before_compact` serves it.
 * The ready job is re-validated first: a stale one is rejected here, so Pi never runs a
 * blocking compaction of its own that nobody asked for. Returns whether Pi was asked.
 */
export function requestCompact(rc: RegistrationContext, request: { ctx: ExtensionContext; jobId: string; path: ApplyPath }): boolean {
  const { ctx, jobId, path } = request;
  if (rc.state.compactRequestedFor === jobId) return false;
  const ready = readyJob(rc);
  if (!ready || ready.job.jobId !== jobId || ready.handoff) return false;
  const verdict = validateReady(rc, { ctx, ready, branch: ctx.sessionManager.getBranch(), settings: rc.options.getCompactionSettings(ctx) });
  if (!verdict.ok) {
    rejectReady(rc, { jobId, path, reason: verdict.reason });
    return false;
  }
  rc.state.compactRequestedFor = jobId;
  rc.emit({ kind: "apply", jobId, path, outcome: "requested" });
  ctx.compact({
    onError: (error) => {
      rc.state.compactRequestedFor = undefined;
      const ready = readyJob(rc);
      if (ready?.job.jobId === jobId && ready.handoff) {
        rc.controller.dispatch({ type: "apply_failed", jobId, error: error.message });
        rc.emit({ kind: "apply", jobId, path, outcome: "failed", error: error.message });
      }
    },
  });
  return true;
}
