/**
 * One flush: capture → summarize → plan (through cache discipline when on) → index the
 * originals it hides (spilling huge ones) → persist → status. It updates the runtime's
 * memory in place, reading it and the context again after the summarizer's await, since a
 * compaction may have moved both meanwhile. Flushes never overlap (the flush queue sees to that).
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { captureForFlush } from "../keeper/flush.ts";
import { keeperRender } from "../keeper/render.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import { timestampOf, type ContextMessage } from "../session/messages.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { prunedCallsOf } from "../recall/pruned-calls.ts";
import { recordOriginals, type SpillFailure, withoutFailedSpills, writeSpills } from "../recall/recall-index.ts";
import { commitFlush, planFlush } from "./flush-planning.ts";
import type { FlushReport, FlushTrigger, PruningMemory, PruningRuntimeDeps } from "./pruning-types.ts";
import { contextMessagesOf, contextStatus, modelIdentity } from "./session-view.ts";
import { spillPathFor, writeSpillFile } from "./spill-files.ts";
import { summarizeForFlush } from "./summarize-effect.ts";

export interface FlushRunOptions {
  deps: PruningRuntimeDeps;
  now: () => number;
  memory: PruningMemory;
  trigger: FlushTrigger;
  ctx: ExtensionContext;
  /** The assistant message that ended the request, when Pi may not have persisted it yet. */
  closingMessage?: ContextMessage;
}

export async function runFlush({ deps, now, memory, trigger, ctx, closingMessage }: FlushRunOptions): Promise<FlushReport> {
  const started = now();
  const settings = deps.settings();
  const model = modelIdentity(ctx);
  const branchMessages = contextMessagesOf(ctx);
  // A compaction applied as a turn_end draft fires no session_compact: drop what left the context here.
  memory.state = dropStateOutsideContext(memory.state, liveOccurrenceKeys(branchMessages));
  const inputs = {
    state: memory.state,
    branchMessages,
    closingMessage: closingAlreadyPersisted(branchMessages, closingMessage) ? undefined : closingMessage,
    settings,
    model,
  };
  const capture = captureForFlush(inputs);
  memory.abort = new AbortController();
  const summaries = await summarizeForFlush({
    ctx,
    settings,
    batches: capture.batches,
    cache: memory.summaryCache,
    signal: memory.abort.signal,
    requestFacts: deps.discipline?.facts(ctx),
    onProgress: (p) => deps.status(ctx, `keeper: ${p.label}`),
    onNotice: (text) => {
      if (memory.notices.has(text)) return;
      memory.notices.add(text);
      deps.notify(ctx, text, "warning");
    },
  });
  memory.abort = undefined;
  // Plan against the state and the context as they are now (a flush never overlaps another
  // one, but a compaction may have applied while the summarizer ran: batches it removed get
  // no stub, their summaries are reported unknown).
  const state = memory.state;
  const contextNow = contextMessagesOf(ctx);
  const planInputs = {
    ...inputs,
    state,
    summaries,
    branchMessages: contextNow,
    closingMessage: closingAlreadyPersisted(contextNow, closingMessage) ? undefined : closingMessage,
  };
  const plan = planFlush({ deps, now, inputs: planInputs, ctx, label: `flush ${state.stats.flushes + 1} (${trigger})` });
  // Every output the new state hides gets indexed (huge ones spilled beside the session)
  // before any stub or chain line can point at it: summarized batches, aliased duplicates,
  // and calls listed inside compressed chains.
  const sessionFile = ctx.sessionManager.getSessionFile();
  const recorded = recordOriginals(memory.recall, {
    calls: [...capture.batches.flatMap((b) => b.calls), ...prunedCallsOf(contextNow, plan.nextState)],
    spill: sessionFile ? { thresholdBytes: settings.recall.spillThresholdBytes, pathFor: (_call, sha) => spillPathFor(sessionFile, sha) } : undefined,
  });
  // A spill is a second copy (the original stays in the session): a failed write commits without it.
  const spilled = await writeSpills(recorded.spills, writeSpillFile);
  if (spilled.failed.length > 0) warnSpillFailure(deps, ctx, memory, spilled.failed);
  commitFlush({ pi: deps.pi, memory, nextRecall: withoutFailedSpills(recorded.index, spilled.failed), plan });
  const usage = ctx.getContextUsage();
  if (usage?.tokens != null) memory.tokensAtLastFlush = usage.tokens;
  const done: FlushReport = {
    trigger,
    batches: capture.batches.length,
    decisions: plan.decisions,
    persistedEntries: plan.entriesToPersist.length,
    durationMs: now() - started,
  };
  memory.report = done;
  deps.status(ctx, contextStatus(contextNow, keeperRender({ messages: contextNow, state: memory.state, settings, model })));
  return done;
}

/** A queued flush may run after Pi persisted its closing message: never count it twice. */
function closingAlreadyPersisted(branchMessages: readonly ContextMessage[], closingMessage: ContextMessage | undefined): boolean {
  const closingTs = closingMessage === undefined ? undefined : timestampOf(closingMessage);
  return closingTs !== undefined && branchMessages.some((m) => m.role === "assistant" && timestampOf(m) === closingTs);
}

/** One warning per session: what failed, and that pruning went on with the originals in the session file. */
function warnSpillFailure(deps: PruningRuntimeDeps, ctx: ExtensionContext, memory: PruningMemory, failed: readonly SpillFailure[]): void {
  if (memory.notices.has(SPILL_NOTICE)) return;
  memory.notices.add(SPILL_NOTICE);
  const first = failed[0]!;
  const text =
    `could not write ${failed.length} spill file(s) (${first.error}); pruned anyway — ` +
    "those originals are recalled from the session file, not from a side file";
  memory.diagnostics = [...memory.diagnostics, text];
  deps.notify(ctx, `context-keeper: ${text}`, "warning");
}

const SPILL_NOTICE = "spill-write-failed";
