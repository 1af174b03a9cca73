/**
 * One live flush, performed by the host around the engine's `step`:
 *
 *   flush-begin (capture once) → effect summarize: the summarizer call, routed as the effect
 *   says → flush-plan (propose → decide → apply → entries) → effect write-spills: the spill
 *   files → flush-written (adopt) → effect append: the entries
 *
 * The engine decides everything; this file reads Pi (branch, usage, model), calls the
 * summarizer, writes files and appends entries. Flushes never overlap (flush-queue.ts), but a
 * compaction may apply while the summarizer runs: the plan reads the context again after it.
 * A spill file that cannot be written is reported once; the flush commits without it.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { writeSpills, type SpillFailure } from "../recall/recall-index.ts";
import { timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { disciplineOn, effectOf, type DisciplineFacts, type EngineEffect, type FlushReport, type FlushTrigger } from "../engine/index.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { batchContentHash } from "../summarize/model-summarizer.ts";
import type { EngineCell } from "./engine-cell.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";
import { spillPathFor, writeSpillFile } from "./spill-files.ts";
import { summarizeForFlush } from "./summarize-effect.ts";

export interface FlushJobDeps {
  pi: Pick<ExtensionAPI, "appendEntry">;
  cell: EngineCell;
  settings: () => KeeperSettings;
  now: () => number;
  /** The engine's cache facts now (cache-edge.ts). */
  facts: (ctx: ExtensionContext) => DisciplineFacts;
  /** Summaries already made, by batch content: a re-run flush does not pay for them twice. */
  summaryCache: Map<string, BatchSummary>;
  /** Holds the running flush's summarizer abort (session shutdown aborts it). */
  running: { abort?: AbortController };
  /** A flush's progress for the status line ("summarizing 2/5 batches…"); undefined when it ends. */
  status: (ctx: ExtensionContext, progress: string | undefined) => void;
  /** What the next request will carry after a flush (raw branch vs its render), for the status line. */
  rendered?: (ctx: ExtensionContext, raw: readonly ContextMessage[], rendered: readonly ContextMessage[]) => void;
  /** Perform the engine's notify effects. */
  perform: (effects: readonly EngineEffect[], ctx: ExtensionContext) => void;
}

export interface FlushJob {
  deps: FlushJobDeps;
  trigger: FlushTrigger;
  ctx: ExtensionContext;
  /** The assistant message that ended the request, when Pi may not have persisted it yet. */
  closingMessage?: ContextMessage;
}

/** Append the entries of every `append` effect, in order (the recall delta first). */
export function appendEntries(pi: Pick<ExtensionAPI, "appendEntry">, effects: readonly EngineEffect[]): void {
  for (const e of effects) if (e.kind === "append") for (const entry of e.entries) pi.appendEntry(entry.customType, entry.data);
}

export async function runFlushJob({ deps, trigger, ctx, closingMessage }: FlushJob): Promise<FlushReport> {
  const { cell } = deps;
  const started = deps.now();
  const settings = deps.settings();
  const model = modelIdentity(ctx);
  const branchMessages = contextMessagesOf(ctx);
  const closing = closingAlreadyPersisted(branchMessages, closingMessage) ? undefined : closingMessage;
  const begun = cell.step({
    type: "flush-begin",
    trigger,
    settings,
    model,
    branchMessages,
    closingMessage: closing,
    summaryFacts: deps.facts(ctx),
    cached: (b) => deps.summaryCache.has(batchContentHash(b)),
  });
  const { capture, routes } = effectOf(begun, "summarize");
  const abort = (deps.running.abort = new AbortController());
  const summaries = await summarizeForFlush({
    ctx,
    settings,
    batches: capture.batches,
    routes,
    cache: deps.summaryCache,
    signal: abort.signal,
    onProgress: (p) => deps.status(ctx, p.label),
    onNotice: (text) => deps.perform(cell.step({ type: "notice", text, level: "warning" }).effects, ctx),
  });
  deps.running.abort = undefined;
  // Plan against the state and the context as they are now: a compaction may have applied while
  // the summarizer ran (batches it removed get no stub, their summaries are reported unknown).
  const contextNow = contextMessagesOf(ctx);
  const closingNow = closingAlreadyPersisted(contextNow, closingMessage) ? undefined : closingMessage;
  const sessionFile = ctx.sessionManager.getSessionFile();
  const planned = cell.step({
    type: "flush-plan",
    settings,
    model,
    branchMessages: contextNow,
    closingMessage: closingNow,
    summaries,
    now: deps.now(),
    facts: disciplineOn(settings) ? deps.facts(ctx) : undefined,
    label: `flush ${cell.get().keeper.stats.flushes + 1} (${trigger})`,
    recall: sessionFile ? { spill: { thresholdBytes: settings.recall.spillThresholdBytes, pathFor: (_call, sha) => spillPathFor(sessionFile, sha) } } : {},
  });
  // Every original the new state hides is indexed (huge ones spilled beside the session)
  // before any stub or chain line can point at it.
  // A spill is a second copy (the original stays in the session): a failed write commits without it.
  deps.perform(planned.effects, ctx);
  const { result } = effectOf(planned, "write-spills");
  const spilled = await writeSpills(result.spills, writeSpillFile);
  if (spilled.failed.length > 0) deps.perform(cell.step(spillNotice(spilled.failed)).effects, ctx);
  const written = cell.step({
    type: "flush-written",
    result,
    failed: spilled.failed,
    contextTokens: ctx.getContextUsage()?.tokens ?? undefined,
    report: { trigger, batches: capture.batches.length, durationMs: deps.now() - started },
  });
  appendEntries(deps.pi, written.effects);
  const done = written.state.lastFlush!;
  // One render outside the flush, off the request path: remembered for the next request (the
  // engine's render ahead of the next prompt), and the status line's figures.
  deps.status(ctx, undefined);
  const ahead = cell.step({ type: "render-ahead", settings, model, messages: contextNow });
  deps.perform(ahead.effects, ctx);
  deps.rendered?.(ctx, contextNow, ahead.render ?? contextNow);
  return done;
}

/** A queued flush may run after Pi persisted its closing message: never count it twice. */
function closingAlreadyPersisted(branchMessages: readonly ContextMessage[], closingMessage: ContextMessage | undefined): boolean {
  const closingTs = closingMessage === undefined ? undefined : timestampOf(closingMessage);
  return closingTs !== undefined && branchMessages.some((m) => m.role === "assistant" && timestampOf(m) === closingTs);
}

/** The key a spill warning shares, so a session sees one warning whichever path failed. */
export const SPILL_NOTICE = "spill-write-failed";

/**
 * One warning per session: what failed, and that pruning went on with the originals in the
 * session file; a flush's is also listed under `/keeper`'s "saved state" (`listed`).
 */
export function spillNotice(failed: readonly SpillFailure[], listed = true) {
  const text =
    `could not write ${failed.length} copy(ies) of large outputs beside the session (${failed[0]!.error}); pruned anyway — ` +
    "those outputs are recalled from the session file itself";
  return { type: "notice" as const, key: SPILL_NOTICE, text: `context-keeper: ${text}`, level: "warning" as const, ...(listed ? { problem: text } : {}) };
}
