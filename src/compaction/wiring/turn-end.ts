/**
 * `turn_end`: hand a ready job over as a `compaction` draft (apply path 1), otherwise
 * start a background job when usage is inside the start window.
 */
import type { ExtensionContext, TurnEndEventResult } from "@earendil-works/pi-coding-agent";
import { adaptiveStartTokens, recordTurn } from "../adaptive-start.ts";
import { isInStartWindow, startWindowBounds } from "../config.ts";
import type { InvalidationReason } from "../job-reducer.ts";
import { markedDetails } from "../persistence.ts";
import { enterHook } from "./activity.ts";
import { readyJob, type RegistrationContext } from "./context.ts";
import { confirmDraft, handoffResult, rejectReady, validateReady } from "./ready-handoff.ts";

export function registerTurnEndHook(rc: RegistrationContext): void {
  const { controller: c, emit } = rc;
  rc.pi.on("turn_end", (event, ctx): TurnEndEventResult | undefined => {
    if (!enterHook(rc, ctx)) return undefined;
    c.remember(ctx);
    confirmDraft(rc, ctx);
    let supersede: InvalidationReason | undefined;
    const ready = readyJob(rc);
    // Only a completed turn: an aborted or failed one may be followed by Pi's own recovery
    // (or by shutdown), and the job stays ready for agent_end / the next boundary.
    if (ready && !ready.handoff && event.outcome === "completed" && !event.entries.some((e) => e.type === "compaction")) {
      const live = { ready, branch: ctx.sessionManager.getBranch(), settings: rc.options.getCompactionSettings(ctx) };
      const verdict = validateReady(rc, { ctx, ...live });
      if (verdict.ok) {
        const jobId = ready.job.jobId;
        const result = handoffResult(rc, live);
        c.dispatch({ type: "handed_off", jobId, via: "turn_end_draft" });
        emit({ kind: "apply", jobId, path: "turn_end_draft", outcome: "handed_off" });
        const draft = { type: "compaction" as const, summary: result.summary, firstKeptEntryId: result.firstKeptEntryId, details: markedDetails(ready.job, result.details), usage: result.usage as never };
        return { entries: [...event.entries, draft] };
      }
      rejectReady(rc, { jobId: ready.job.jobId, path: "turn_end_draft", reason: verdict.reason });
      supersede = verdict.reason;
    }
    maybeStart(rc, ctx, supersede);
    return undefined;
  });
}

/**
 * Record this turn's context size, then start a job when usage sits inside the start window
 * (`supersede`: replace a rejected one). The window opens at the adaptive start: the
 * configured ratio, moved earlier when the context grows faster than a summary takes. Pi's
 * own `compaction.enabled: false` means no automatic start (the command still starts one).
 */
function maybeStart(rc: RegistrationContext, ctx: ExtensionContext, supersede?: InvalidationReason): void {
  const { config, controller: c, emit, state } = rc;
  c.noteStartWindow(undefined);
  if (!config.enabled) return;
  const usage = ctx.getContextUsage();
  if (!usage || usage.tokens === null) return emit({ kind: "skipped", reason: "no_usage" });
  state.pace = recordTurn(state.pace, { at: rc.now(), tokens: usage.tokens });
  const settings = rc.options.getCompactionSettings(ctx);
  if (settings.enabled === false) return emit({ kind: "skipped", reason: "pi_compaction_disabled" });
  const configuredStart = Math.floor(usage.contextWindow * config.startRatio);
  const startTokens = config.adaptiveStart === false ? configuredStart : adaptiveStartTokens({
    pace: state.pace,
    contextWindow: usage.contextWindow,
    reserveTokens: settings.reserveTokens,
    keepRecentTokens: settings.keepRecentTokens,
    configuredStart,
  });
  const window = { tokens: usage.tokens, contextWindow: usage.contextWindow, startRatio: config.startRatio, reserveTokens: settings.reserveTokens, startTokens };
  // The pruning side holds its budget flush inside this window (`cooperation.ts`).
  c.noteStartWindow(startWindowBounds(window));
  if (!isInStartWindow(window)) return emit({ kind: "skipped", reason: "not_in_window" });
  const outcome = c.start(ctx, { manual: false, supersede });
  if (outcome.started) return;
  // A start that cannot happen must not hold the budget flush at every turn.
  if (outcome.reason !== "busy") c.noteStartWindow(undefined);
  emit({ kind: "skipped", reason: outcome.reason });
}
