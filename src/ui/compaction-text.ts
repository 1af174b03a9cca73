/** Sentences for the async-compaction codes a user can see (`/async-compact-now`). Pure. */

export type CompactionSkipReason = "disabled" | "no_model" | "nothing_to_compact" | "busy" | "not_in_window" | "no_usage";

const SENTENCES: Record<CompactionSkipReason, string> = {
  disabled: "background compaction is off (compaction.enabled, or PI_ASYNC_PREFIX_COMPACTION)",
  no_model: "no model is selected to write the summary",
  nothing_to_compact: "there is nothing old enough to compact yet: the history fits in what Pi keeps anyway",
  busy: "a compaction is already in progress",
  not_in_window: "the context is not yet large enough for a compaction to be worth it",
  no_usage: "Pi has not reported the context size yet (no answer since the session started or was compacted)",
};

/** "not started: there is nothing old enough to compact yet…" */
export function compactionNotStarted(reason: string): string {
  const sentence = (SENTENCES as Record<string, string | undefined>)[reason];
  return `not started: ${sentence ?? reason.replace(/_/g, " ")}`;
}
