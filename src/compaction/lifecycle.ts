/** Structured lifecycle events, emitted synchronously for every transition and apply path. */
import type { HandoffVia, InvalidationReason, JobEvent, JobState } from "./job-reducer.ts";

export type ApplyPath = HandoffVia | "idle_compact" | "abort_and_compact" | "restore" | "late_digest";

export type ApplyOutcome =
  | "requested" // ctx.compact() was called
  | "handed_off" // the result went to Pi (draft or hook return)
  | "applied" // Pi persisted it
  | "rejected" // validation failed; Pi falls back to its own compaction
  | "failed" // Pi reported an error after handoff
  | "deferred" // not idle / queued messages; stays ready
  | "waiting" // ready, but the context does not need it yet (`apply-need.ts`); stays ready
  | "upgraded"; // a late job's summary was written as the upgrade of the digest applied in its place

export type LifecycleEvent =
  | { kind: "transition"; jobId: string; from: JobState["kind"]; to: JobState["kind"]; cause: JobEvent["type"]; reason?: InvalidationReason; error?: string }
  | { kind: "ignored"; jobId?: string; cause: JobEvent["type"] }
  | { kind: "apply"; jobId: string; path: ApplyPath; outcome: ApplyOutcome; reason?: InvalidationReason; error?: string }
  | { kind: "skipped"; reason: "disabled" | "no_model" | "nothing_to_compact" | "busy" | "not_in_window" | "no_usage" | "pi_compaction_disabled" }
  /** Pi was about to compact while a job was pending: what was decided (and, after a wait, how it ended). */
  | { kind: "at_compact"; jobId: string; trigger: string; decision: "cancel" | "wait" | "fallback"; tokens?: number; waitedMs?: number; waitEnd?: "settled" | "timeout" | "aborted" }
  /** A ready job's cut moved to Pi's cut at apply time; the gap went into an extractive digest (`catch-up.ts`). */
  | { kind: "catch_up"; jobId: string; fromEntryId: string; toEntryId: string; gapMessages: number }
  /** A summary waiting for need fell too far behind (`gapTokens` past its cut): a new job replaces it (`apply-need.ts`). */
  | { kind: "refresh"; jobId: string; gapTokens: number }
  | { kind: "diagnostic"; message: string };

export type LifecycleListener = (event: LifecycleEvent) => void;
