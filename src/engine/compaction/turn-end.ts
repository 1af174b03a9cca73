/**
 * `turn_end`: hand a ready job over as a `compaction` draft (apply path 1) when the context
 * needs it (`apply-need.ts`), otherwise start a background job when usage is inside the start
 * window (or refresh a waiting one whose cut fell far behind); and `/async-compact-now`. A start is
 * two steps: the engine asks for one (`compaction-start`), the host prepares it with the
 * adapter and steps `compaction-started`.
 */
import { adaptiveStartTokens, leadTokens, recordTurn } from "../../compaction/adaptive-start.ts";
import { refreshDue } from "../../compaction/apply-need.ts";
import { isInStartWindow, startWindowBounds } from "../../compaction/config.ts";
import type { InvalidationReason, JobSnapshot } from "../../compaction/job-reducer.ts";
import { markedDetails } from "../../compaction/persistence.ts";
import { compactionNotStarted } from "../../ui/compaction-text.ts";
import { dispatch, emit, readyJob, startBlocked, startJob, type StepContext } from "./job.ts";
import { confirmDraft, handoffResult, isSafeIdle, rejectReady, requestCompact, validateReady } from "./ready.ts";
import { readyIsDue, recordApplyFrom, reportWaiting, summaryLag } from "./need.ts";
import type { CompactionLive, ReadyJob, StartRequest } from "./types.ts";

/** `turn_end`'s answer when a draft is handed over: Pi's entries with the compaction after them. */
export interface TurnEndDraft {
  entries: unknown[];
}

export function turnEnd(cx: StepContext, live: CompactionLive, event: { outcome: string; entries: readonly { type: string }[] }): TurnEndDraft | undefined {
  const out = draftOrStart(cx, live, event);
  // The next request goes out now: the cache is used about this time (without the keeper's ledger).
  cx.state = { ...cx.state, lastActivityAt: live.now };
  return out;
}

/**
 * The cold check sees the previous turn end as the last use without the keeper's ledger: this
 * turn's request went out right after it, and a gap since then longer than the cache's lifetime
 * (a long tool run) means the next request writes everything anyway.
 */
function draftOrStart(cx: StepContext, live: CompactionLive, event: { outcome: string; entries: readonly { type: string }[] }): TurnEndDraft | undefined {
  confirmDraft(cx, live);
  recordPace(cx, live);
  let supersede: InvalidationReason | undefined;
  const ready = readyJob(cx);
  // Only a completed turn: an aborted or failed one may be followed by Pi's own recovery
  // (or by shutdown), and the job stays ready for agent_end / the next boundary.
  if (ready && !ready.handoff && event.outcome === "completed" && !event.entries.some((e) => e.type === "compaction")) {
    // Not before the context needs it (near Pi's threshold, or the cache cold anyway:
    // `apply-need.ts`), unless the user asked for it.
    if (!readyIsDue(cx, live, ready)) {
      reportWaiting(cx, ready.job.jobId, "turn_end_draft");
      maybeStart(cx, live, undefined, ready);
      return undefined;
    }
    const state = { ready, branch: live.branch(), settings: live.settings() };
    const verdict = validateReady(cx, { live, ...state });
    if (verdict.ok) {
      const jobId = ready.job.jobId;
      const result = handoffResult(cx, state);
      dispatch(cx, { type: "handed_off", jobId, via: "turn_end_draft" });
      emit(cx, { kind: "apply", jobId, path: "turn_end_draft", outcome: "handed_off" });
      const draft = { type: "compaction" as const, summary: result.summary, firstKeptEntryId: result.firstKeptEntryId, details: markedDetails(ready.job, result.details), usage: result.usage };
      return { entries: [...event.entries, draft] };
    }
    rejectReady(cx, { jobId: ready.job.jobId, path: "turn_end_draft", reason: verdict.reason });
    supersede = verdict.reason;
  }
  maybeStart(cx, live, supersede);
  return undefined;
}

/** Record this turn's context size (adaptive start, the room and need margins). */
function recordPace(cx: StepContext, live: CompactionLive): void {
  if (!cx.setup.config.enabled) return;
  const usage = live.usage();
  if (usage && usage.tokens !== null) cx.state = { ...cx.state, pace: recordTurn(cx.state.pace, { at: live.now, tokens: usage.tokens }) };
  recordApplyFrom(cx, live, usage?.contextWindow);
}

/**
 * Start a job when usage sits inside the start window (`supersede`: replace a rejected one).
 * The window opens at the adaptive start: the configured ratio, moved earlier when the context
 * grows faster than a summary takes. Pi's own `compaction.enabled: false` means no automatic
 * start (the command still starts one). With a summary `waiting` for need, a new job replaces it
 * when its cut has fallen further behind Pi's than `keepRecentTokens` and than what it covers,
 * and the context is one summary's lead short of where it applies (`refreshDue`): ready just in
 * time.
 */
function maybeStart(cx: StepContext, live: CompactionLive, supersede: InvalidationReason | undefined, waiting?: ReadyJob): void {
  const config = cx.setup.config;
  cx.state = { ...cx.state, startWindow: undefined };
  if (!config.enabled) return;
  const usage = live.usage();
  if (!usage || usage.tokens === null) return emit(cx, { kind: "skipped", reason: "no_usage" });
  const settings = live.settings();
  if (settings.enabled === false) return emit(cx, { kind: "skipped", reason: "pi_compaction_disabled" });
  const configuredStart = Math.floor(usage.contextWindow * config.startRatio);
  const startTokens =
    config.adaptiveStart === false
      ? configuredStart
      : adaptiveStartTokens({ pace: cx.state.pace, contextWindow: usage.contextWindow, reserveTokens: settings.reserveTokens, keepRecentTokens: settings.keepRecentTokens, configuredStart });
  const window = { tokens: usage.tokens, contextWindow: usage.contextWindow, startRatio: config.startRatio, reserveTokens: settings.reserveTokens, startTokens };
  // The outlook shows this window to the pruning side (`cooperation.ts`).
  cx.state = { ...cx.state, startWindow: startWindowBounds(window) };
  if (!isInStartWindow(window)) return emit(cx, { kind: "skipped", reason: "not_in_window" });
  if (waiting) {
    const near = { tokens: usage.tokens, applyFrom: cx.state.applyFrom, leadTokens: leadTokens(cx.state.pace), keepRecentTokens: settings.keepRecentTokens };
    // The lag is measured only once the context is near: it reads the branch.
    const lag = refreshDue({ ...near, gapTokens: Number.POSITIVE_INFINITY, coveredTokens: 0 }) ? summaryLag(cx, live, waiting) : { gapTokens: 0, coveredTokens: 0 };
    if (!refreshDue({ ...near, ...lag })) return emit(cx, { kind: "skipped", reason: "busy" });
    emit(cx, { kind: "refresh", jobId: waiting.job.jobId, gapTokens: lag.gapTokens });
    supersede = "superseded";
  }
  const blocked = startBlocked(cx, live, supersede);
  if (blocked) return notStarted(cx, { manual: false, origin: "turn_end", ...(supersede ? { supersede } : {}) }, blocked);
  cx.effects.push({ kind: "compaction-start", request: { manual: false, origin: "turn_end", ...(supersede ? { supersede } : {}) } });
}

/** A start that did not happen: said to the user for the command; at a turn end, the window no longer held for it. */
function notStarted(cx: StepContext, request: StartRequest, reason: "disabled" | "no_model" | "nothing_to_compact" | "busy"): void {
  if (request.origin === "command") {
    cx.effects.push({ kind: "say", text: `${cx.setup.adapter.label}: ${compactionNotStarted(reason)}`, level: "info" });
    return;
  }
  // A start that cannot happen must not hold the budget flush at every turn.
  if (reason !== "busy") cx.state = { ...cx.state, startWindow: undefined };
  emit(cx, { kind: "skipped", reason });
}

/** The host prepared the job a start asked for (undefined: the adapter found nothing to compact). */
export function started(cx: StepContext, job: JobSnapshot | undefined, request: StartRequest): void {
  if (!job) return notStarted(cx, request, "nothing_to_compact");
  if (!startJob(cx, job, request.supersede)) return notStarted(cx, request, "busy");
  if (request.origin === "command") cx.effects.push({ kind: "say", text: `${cx.setup.adapter.label}: preparing`, level: "info" });
}

/** `/async-compact-now`: apply a ready summary when idle, otherwise start a job now. */
export function compactNow(cx: StepContext, live: CompactionLive): void {
  const label = cx.setup.adapter.label;
  const say = (text: string): void => void cx.effects.push({ kind: "say", text, level: "info" });
  confirmDraft(cx, live);
  if (cx.state.job.kind === "pending") return say(`${label}: already preparing`);
  const ready = readyJob(cx);
  if (ready && !ready.handoff) {
    if (!isSafeIdle(live)) return say(`${label}: ready; applies at the next turn boundary`);
    if (!requestCompact(cx, live, { jobId: ready.job.jobId, path: "idle_compact" })) say(`${label}: the ready summary went stale; not applied`);
    return;
  }
  const request: StartRequest = { manual: true, origin: "command" };
  const blocked = startBlocked(cx, live, undefined);
  if (blocked) return notStarted(cx, request, blocked);
  cx.effects.push({ kind: "compaction-start", request });
}
