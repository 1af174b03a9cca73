/**
 * The background compaction job as one explicit state machine.
 *
 *   idle -> pending -> ready -> idle            (applied)
 *              |          \-> stale | failed
 *              |-> stale | failed
 *              \-> idle                         (late handoff: a digest was applied in its place;
 *                                               the run goes on outside the machine, and its
 *                                               summary upgrades that digest: controller.ts)
 *
 * Every event names the job it is about. An event for any other job (a late promise, a
 * timer that lost the race) leaves the state untouched: the reducer returns the same
 * object, which is how callers recognise an ignored continuation.
 */

/** Why a pending or ready job was dropped. */
export type InvalidationReason =
  | "first_kept_missing"
  | "first_kept_tool_result"
  | "snapshot_leaf_missing"
  | "first_kept_after_snapshot"
  | "first_kept_mismatch"
  | "model_changed"
  | "session_changed"
  | "thinking_changed"
  | "settings_changed"
  | "custom_instructions"
  | "too_large"
  | "superseded"
  | "sync_fallback"
  | "cancelled"
  | "timeout"
  | "failed";

export const INVALIDATION_REASONS: readonly InvalidationReason[] = [
  "first_kept_missing",
  "first_kept_tool_result",
  "snapshot_leaf_missing",
  "first_kept_after_snapshot",
  "first_kept_mismatch",
  "model_changed",
  "session_changed",
  "thinking_changed",
  "settings_changed",
  "custom_instructions",
  "too_large",
  "superseded",
  "sync_fallback",
  "cancelled",
  "timeout",
  "failed",
];

/** Validation metadata recorded when a job starts. */
export interface JobSnapshot {
  jobId: string;
  sessionId: string;
  snapshotLeafId: string;
  firstKeptEntryId: string;
  modelKey: string;
  thinkingLevel: string;
  settingsKey: string;
  promptVersion: string;
  /** Adapter that owns the job (`AsyncCompactionAdapter.id`). */
  adapterId: string;
  /** True for `/async-compact-now`, false for the automatic threshold start. */
  manual: boolean;
  startedAt: number;
}

/** What a finished job offers to Pi: a `CompactionResult` in Pi's shape. */
export interface ReadyCompaction {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  usage?: unknown;
}

/** How a ready result was handed to Pi. */
export type HandoffVia = "turn_end_draft" | "session_before_compact";

export type JobState =
  | { kind: "idle"; lastJobId?: string }
  | { kind: "pending"; job: JobSnapshot }
  | { kind: "ready"; job: JobSnapshot; result: ReadyCompaction; handoff?: HandoffVia; persisted: boolean }
  | { kind: "stale"; job: JobSnapshot; reason: InvalidationReason; cause?: InvalidationReason }
  | { kind: "failed"; job: JobSnapshot; reason: "failed"; error: string };

export type JobEvent =
  | { type: "start"; job: JobSnapshot }
  | { type: "settled_ok"; jobId: string; result: ReadyCompaction }
  | { type: "settled_error"; jobId: string; error: string }
  | { type: "timeout"; jobId: string }
  | { type: "invalidate"; jobId: string; reason: InvalidationReason }
  /** A ready job (or a stale one that no longer fits) is replaced by a new pending job. */
  | { type: "superseded"; jobId: string; cause: InvalidationReason; next: JobSnapshot }
  /** A persisted ready summary read back after a restart; with `staleReason` it failed revalidation. */
  | { type: "restored"; job: JobSnapshot; result: ReadyCompaction; staleReason?: InvalidationReason }
  | { type: "persisted"; jobId: string }
  | { type: "handed_off"; jobId: string; via: HandoffVia }
  /** Pi compacts now with an extractive digest in the pending job's place; its run goes on outside the machine. */
  | { type: "late_handoff"; jobId: string }
  | { type: "applied"; jobId: string }
  | { type: "apply_failed"; jobId: string; error: string };

export const INITIAL_JOB_STATE: JobState = { kind: "idle" };

/** The job the state is about, if any. */
export function currentJobId(state: JobState): string | undefined {
  return state.kind === "idle" ? undefined : state.job.jobId;
}

/** A new job may start only when nothing is pending or ready. */
export function canStart(state: JobState): boolean {
  return state.kind === "idle" || state.kind === "stale" || state.kind === "failed";
}

function isFor(state: JobState, jobId: string): boolean {
  return currentJobId(state) === jobId;
}

export function jobReducer(state: JobState, event: JobEvent): JobState {
  switch (event.type) {
    case "start":
      return canStart(state) ? { kind: "pending", job: event.job } : state;
    case "restored":
      if (!canStart(state)) return state;
      if (event.staleReason) return { kind: "stale", job: event.job, reason: event.staleReason };
      return { kind: "ready", job: event.job, result: event.result, persisted: true };
    case "settled_ok":
      if (state.kind !== "pending" || !isFor(state, event.jobId)) return state;
      return { kind: "ready", job: state.job, result: event.result, persisted: false };
    case "late_handoff":
      if (state.kind !== "pending" || !isFor(state, event.jobId)) return state;
      return { kind: "idle", lastJobId: event.jobId };
    case "settled_error":
      if (state.kind !== "pending" || !isFor(state, event.jobId)) return state;
      return { kind: "failed", job: state.job, reason: "failed", error: event.error };
    case "timeout":
      if (state.kind !== "pending" || !isFor(state, event.jobId)) return state;
      return { kind: "stale", job: state.job, reason: "timeout" };
    case "invalidate":
      if ((state.kind !== "pending" && state.kind !== "ready") || !isFor(state, event.jobId)) return state;
      return { kind: "stale", job: state.job, reason: event.reason };
    case "superseded":
      if ((state.kind !== "ready" && state.kind !== "stale") || !isFor(state, event.jobId)) return state;
      if (state.kind === "ready" && state.handoff) return state;
      return { kind: "pending", job: event.next };
    case "persisted":
      if (state.kind !== "ready" || !isFor(state, event.jobId) || state.persisted) return state;
      return { ...state, persisted: true };
    case "handed_off":
      if (state.kind !== "ready" || !isFor(state, event.jobId) || state.handoff) return state;
      return { ...state, handoff: event.via };
    case "applied":
      if (state.kind !== "ready" || !isFor(state, event.jobId)) return state;
      return { kind: "idle", lastJobId: event.jobId };
    case "apply_failed":
      if (state.kind !== "ready" || !isFor(state, event.jobId)) return state;
      return { kind: "failed", job: state.job, reason: "failed", error: event.error };
  }
}
