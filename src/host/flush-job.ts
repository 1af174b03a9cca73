/**
 * One live flush, performed by the host around the engine's `step`:
 *
 *   flush-begin (capture once) → effect summarize: the summarizer call → flush-plan (propose →
 *   decide → apply → entries) → effect write-spills: the spill files → flush-written (adopt)
 *   → effect append: the entries
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
import type { DisciplineFacts } from "../engine/decide.ts";
import { disciplineOn, effectOf, step, type EngineEffect } from "../engine/index.ts";
import type { FlushReport, FlushTrigger, HostMemory } from "./host-types.ts";
import { tallyFlushRewrite } from "../discipline/rewrite-tally.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";
import { spillPathFor, writeSpillFile } from "./spill-files.ts";
import { summarizeForFlush } from "./summarize-effect.ts";

export interface FlushJobDeps {
  pi: Pick<ExtensionAPI, "appendEntry">;
  settings: () => KeeperSettings;
  now: () => number;
  /** The engine's cache facts now (cache-edge.ts). */
  facts: (ctx: ExtensionContext) => DisciplineFacts;
  /** A flush's progress for the status line ("summarizing 2/5 batches…"); undefined when it ends. */
  status: (ctx: ExtensionContext, progress: string | undefined) => void;
  /** What the next request will carry after a flush (raw branch vs its render), for the status line. */
  rendered?: (ctx: ExtensionContext, raw: readonly ContextMessage[], rendered: readonly ContextMessage[]) => void;
  notify: (ctx: ExtensionContext, text: string, level: "info" | "warning") => void;
}

export interface FlushJob {
  deps: FlushJobDeps;
  memory: HostMemory;
  trigger: FlushTrigger;
  ctx: ExtensionContext;
  /** The assistant message that ended the request, when Pi may not have persisted it yet. */
  closingMessage?: ContextMessage;
}

/** Append the entries of every `append` effect, in order (the recall delta first). */
export function appendEntries(pi: Pick<ExtensionAPI, "appendEntry">, effects: readonly EngineEffect[]): void {
  for (const e of effects) if (e.kind === "append") for (const entry of e.entries) pi.appendEntry(entry.customType, entry.data);
}

export async function runFlushJob({ deps, memory, trigger, ctx, closingMessage }: FlushJob): Promise<FlushReport> {
  const started = deps.now();
  const settings = deps.settings();
  const model = modelIdentity(ctx);
  const branchMessages = contextMessagesOf(ctx);
  const closing = closingAlreadyPersisted(branchMessages, closingMessage) ? undefined : closingMessage;
  const begun = step(memory.engine, { type: "flush-begin", settings, model, branchMessages, closingMessage: closing });
  memory.engine = begun.state;
  const { capture } = effectOf(begun, "summarize");
  memory.abort = new AbortController();
  const summaries = await summarizeForFlush({
    ctx,
    settings,
    batches: capture.batches,
    cache: memory.summaryCache,
    signal: memory.abort.signal,
    requestFacts: deps.facts(ctx),
    onProgress: (p) => deps.status(ctx, p.label),
    onNotice: (text) => {
      if (memory.notices.has(text)) return;
      memory.notices.add(text);
      deps.notify(ctx, text, "warning");
    },
  });
  memory.abort = undefined;
  // Plan against the state and the context as they are now: a compaction may have applied while
  // the summarizer ran (batches it removed get no stub, their summaries are reported unknown).
  const contextNow = contextMessagesOf(ctx);
  const closingNow = closingAlreadyPersisted(contextNow, closingMessage) ? undefined : closingMessage;
  const sessionFile = ctx.sessionManager.getSessionFile();
  const planned = step(memory.engine, {
    type: "flush-plan",
    settings,
    model,
    branchMessages: contextNow,
    closingMessage: closingNow,
    summaries,
    now: deps.now(),
    facts: disciplineOn(settings) ? deps.facts(ctx) : undefined,
    label: `flush ${memory.engine.keeper.stats.flushes + 1} (${trigger})`,
    recall: sessionFile ? { spill: { thresholdBytes: settings.recall.spillThresholdBytes, pathFor: (_call, sha) => spillPathFor(sessionFile, sha) } } : {},
  });
  memory.engine = planned.state;
  // Every original the new state hides is indexed (huge ones spilled beside the session)
  // before any stub or chain line can point at it.
  // A spill is a second copy (the original stays in the session): a failed write commits without it.
  const { result } = effectOf(planned, "write-spills");
  const spilled = await writeSpills(result.spills, writeSpillFile);
  if (spilled.failed.length > 0) warnSpillFailure(deps, ctx, memory, spilled.failed);
  const written = step(memory.engine, { type: "flush-written", result, failed: spilled.failed, contextTokens: ctx.getContextUsage()?.tokens ?? undefined });
  memory.engine = written.state;
  appendEntries(deps.pi, written.effects);
  if (result.rewrote) memory.tally = tallyFlushRewrite(memory.tally);
  const done: FlushReport = {
    trigger,
    batches: capture.batches.length,
    decisions: result.decisions,
    persistedEntries: result.plan.entriesToPersist.length,
    durationMs: deps.now() - started,
  };
  memory.report = done;
  // One render outside the flush, off the request path: remembered for the next request (the
  // engine's render ahead of the next prompt), and the status line's figures.
  deps.status(ctx, undefined);
  const ahead = step(memory.engine, { type: "render-ahead", settings, model, messages: contextNow });
  memory.engine = ahead.state;
  deps.rendered?.(ctx, contextNow, ahead.render ?? contextNow);
  return done;
}

/** A queued flush may run after Pi persisted its closing message: never count it twice. */
function closingAlreadyPersisted(branchMessages: readonly ContextMessage[], closingMessage: ContextMessage | undefined): boolean {
  const closingTs = closingMessage === undefined ? undefined : timestampOf(closingMessage);
  return closingTs !== undefined && branchMessages.some((m) => m.role === "assistant" && timestampOf(m) === closingTs);
}

/** One warning per session: what failed, and that pruning went on with the originals in the session file. */
function warnSpillFailure(deps: FlushJobDeps, ctx: ExtensionContext, memory: HostMemory, failed: readonly SpillFailure[]): void {
  if (memory.notices.has(SPILL_NOTICE)) return;
  memory.notices.add(SPILL_NOTICE);
  const text =
    `could not write ${failed.length} spill file(s) (${failed[0]!.error}); pruned anyway — ` +
    "those originals are recalled from the session file, not from a side file";
  memory.diagnostics = [...memory.diagnostics, text];
  deps.notify(ctx, `context-keeper: ${text}`, "warning");
}

const SPILL_NOTICE = "spill-write-failed";
