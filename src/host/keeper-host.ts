/**
 * The keeper's side of the host: one session runtime's memory, and the effects of each Pi
 * event on it. Decisions are the engine's (`src/engine/`); here: settings files, reading the
 * session, summarizer calls, spill files, appended entries, notifications, the status line
 * (`status-runtime.ts`), the session's settings with `/keeper set` overrides
 * (`session-settings.ts`) and the `/keeper` actions (`keeper-command-handler.ts`).
 * `hooks.ts` registers the Pi events and calls these handlers in a fixed order.
 */
import type {
  BeforeProviderRequestEvent,
  CacheWarmingDecisionEvent,
  ContextEvent,
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
} from "@earendil-works/pi-coding-agent";
import { type CompactionOutlook, compactionStopsWarming } from "../compaction/cooperation.ts";
import { flushesActive, keeperRender, step, type DisciplineFacts, type EngineEffect, type FlushResult } from "../engine/index.ts";
import { tallyFlushRewrite } from "../discipline/rewrite-tally.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import { RECALL_TOOL_NAME } from "../prune/config.ts";
import { restoreRecallIndex } from "../recall/recall-entries.ts";
import { createRecallToolDefinition } from "../recall/tool.ts";
import { purgedArgumentsOnlyKeys } from "../recall/pruned-calls.ts";
import type { ContextMessage } from "../session/messages.ts";
import { formatDiagnostic } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { restoreReconciled } from "../state/torn-flush.ts";
import type { CompletionItem } from "../ui/keeper-completions.ts";
import { cacheText, liveFacts, onProviderRequest, onWarmingDecision, restoreLedger, whyText } from "./cache-edge.ts";
import { commitColdReplans } from "./cold-replan-persist.ts";
import { runFlushJob, type FlushJobDeps } from "./flush-job.ts";
import { createFlushQueue } from "./flush-queue.ts";
import { emptyHostMemory, type FlushReport } from "./host-types.ts";
import { createKeeperCommand, summarizerModelWarning } from "./keeper-command-handler.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";
import { createSessionSettings } from "./session-settings.ts";
import { loadSettingsFromDisk } from "./settings-source.ts";
import { readSpillFile, spillPathFor, writeSpillFile } from "./spill-files.ts";
import { createStatusRuntime } from "./status-runtime.ts";

export type KeeperPi = Pick<ExtensionAPI, "appendEntry" | "getThinkingLevel" | "getActiveTools" | "setActiveTools">;

export interface KeeperHost {
  onSessionStart(ctx: ExtensionContext): void;
  onSessionTree(ctx: ExtensionContext): void;
  onSessionCompact(ctx: ExtensionContext): void;
  onSessionShutdown(): Promise<void>;
  onContext(event: ContextEvent, ctx: ExtensionContext): { messages: ContextMessage[] } | undefined;
  onMessageEnd(message: ContextMessage, ctx: ExtensionContext): void;
  onTurnEnd(ctx: ExtensionContext): void;
  /** Seam mark, request facts and fingerprints; `undefined` keeps the payload. */
  onBeforeProviderRequest(event: BeforeProviderRequestEvent, ctx: ExtensionContext): unknown;
  onCacheWarmingDecision(event: CacheWarmingDecisionEvent): { action: "stop" } | undefined;
  onKeeperCommand(args: string, ctx: ExtensionCommandContext): Promise<void>;
  /** Argument completions for `/keeper` (Pi passes the text typed after "/keeper "). */
  keeperCompletions(prefix: string): CompletionItem[] | null;
  settings(): KeeperSettings;
  /** `messages` as the keeper would render them now (pure: nothing is recorded or persisted). */
  sentContext(messages: ContextMessage[], ctx: ExtensionContext): ContextMessage[];
  /** The `keeper_recall` tool, registered inactive; activated at session start when enabled. */
  recallTool(): ReturnType<typeof createRecallToolDefinition>;
  /** Whether a flush is running (tests). */
  busy(): boolean;
  /** The cache facts now: what the cold-cache check and a flush's gate see. */
  cacheFacts(ctx: ExtensionContext): DisciplineFacts;
}

/** Raw messages of the current branch (pre-compaction ones included): where originals live. */
function rawBranchMessages(ctx: ExtensionContext): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (const entry of ctx.sessionManager.getBranch()) if (entry.type === "message") out.push(entry.message as ContextMessage);
  return out;
}

export function report(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error"): void {
  if (ctx.hasUI) ctx.ui.notify(text, level);
  else process.stderr.write(`${text}\n`);
}

export interface KeeperHostOptions {
  now?: () => number;
  /** Async compaction's outlook, for the budget trigger and warming (`src/compaction/cooperation.ts`). */
  compactionOutlook?: () => CompactionOutlook | undefined;
}

export function createKeeperHost(pi: KeeperPi, options: KeeperHostOptions = {}): KeeperHost {
  const now = options.now ?? (() => Date.now());
  const store = createSessionSettings();
  const settings = (): KeeperSettings => store.current();
  const memory = emptyHostMemory();
  const statusLine = createStatusRuntime({ settings, summarizerCost: () => memory.engine.keeper.stats.summarizerCost });

  const jobDeps: FlushJobDeps = {
    pi,
    settings,
    now,
    facts: (ctx) => liveFacts(memory, pi, ctx, now()),
    status: (ctx, progress) => statusLine.progress(ctx, progress),
    rendered: (ctx, raw, rendered) => statusLine.rendered(ctx, raw, rendered),
    notify: (ctx, text, level) => report(ctx, text, level),
  };
  const flushes = createFlushQueue({
    active: (ctx) => flushesActive(settings(), modelIdentity(ctx)),
    run: ({ trigger, ctx, closingMessage }) => runFlushJob({ deps: jobDeps, memory, trigger, ctx, closingMessage }),
    onFailure: (ctx, error) =>
      report(ctx, `context-keeper: flush failed (${error instanceof Error ? error.message : String(error)}); history left as it was`, "warning"),
  });

  /** Cold re-plans decided at a render, committed once the request is built: spill files, then entries. */
  const persistWaiting = (warn: (text: string) => void) => {
    const waiting = memory.toPersist;
    memory.toPersist = [];
    return commitColdReplans({ pi, memory, waiting, write: writeSpillFile, warn });
  };

  /** The engine's `flush` effects: queued, one at a time. */
  const startFlushes = (effects: readonly EngineEffect[], ctx: ExtensionContext) => {
    for (const e of effects) if (e.kind === "flush") void flushes.start({ trigger: e.trigger, ctx, ...(e.closingMessage ? { closingMessage: e.closingMessage } : {}) });
  };

  const restore = (ctx: ExtensionContext) => {
    const branch = ctx.sessionManager.getBranch() as unknown[];
    const restored = restoreReconciled(branch);
    const restoredRecall = restoreRecallIndex(branch);
    const context = contextMessagesOf(ctx);
    memory.diagnostics = [...restored.diagnostics, ...restoredRecall.diagnostics];
    memory.engine = step(memory.engine, {
      type: "restored",
      keeper: dropStateOutsideContext(restored.state, liveOccurrenceKeys(context)),
      recall: restoredRecall.index,
      ledger: restoreLedger(pi, ctx, context),
      contextTokens: ctx.getContextUsage()?.tokens ?? 0,
    }).state;
    memory.toPersist = [];
    if (memory.diagnostics.length) report(ctx, restoreNotice(memory.diagnostics), "warning");
  };

  /** Session start with the extension on, or `/keeper on` mid-session: restore from the branch, activate recall. */
  const activate = (ctx: ExtensionContext) => {
    restore(ctx);
    const active = pi.getActiveTools();
    if (!active.includes(RECALL_TOOL_NAME)) pi.setActiveTools([...active, RECALL_TOOL_NAME]);
  };

  const flushNow = async (ctx: ExtensionContext): Promise<FlushReport | undefined> => {
    const running = flushes.inFlight();
    if (running) await running;
    return flushes.start({ trigger: "manual", ctx });
  };

  const command = createKeeperCommand({
    settings: store,
    pruning: { state: () => memory.engine.keeper, lastReport: () => memory.report, flushNow, savedState: () => memory.diagnostics },
    cache: { whyText: () => whyText(memory), cacheText: () => cacheText(memory) },
    activate,
    refreshStatus: (ctx) => statusLine.refresh(ctx),
    prunedTokens: () => statusLine.prunedTokens(),
    report,
  });

  return {
    settings,
    sentContext(messages, ctx) {
      const s = settings();
      return s.enabled ? keeperRender({ messages, state: memory.engine.keeper, settings: s, model: modelIdentity(ctx) }) : messages;
    },
    busy: () => flushes.inFlight() !== undefined,
    cacheFacts: (ctx) => liveFacts(memory, pi, ctx, now()),
    onSessionStart(ctx) {
      store.load(loadSettingsFromDisk({ cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() }));
      const diagnostics = store.loaded().diagnostics;
      if (diagnostics.length) report(ctx, diagnostics.map(formatDiagnostic).join("\n"), "warning");
      const modelWarning = summarizerModelWarning(ctx, settings());
      if (modelWarning) {
        // The same text the first flush would give: said once per session (flush-job.ts keeps the set).
        const text = `context-keeper: ${modelWarning}`;
        if (!memory.notices.has(text)) report(ctx, text, "warning");
        memory.notices.add(text);
      }
      if (settings().enabled) activate(ctx);
      command.noteModels(ctx);
      statusLine.refresh(ctx);
    },
    recallTool: () =>
      createRecallToolDefinition({
        getStore: () => memory.engine.recall,
        getBranchMessages: rawBranchMessages,
        readSpill: readSpillFile,
        pageChars: () => settings().recall.pageChars,
        purgedArguments: () => purgedArgumentsOnlyKeys(memory.engine.keeper),
      }),
    onSessionTree(ctx) {
      if (settings().enabled) restore(ctx);
    },
    onSessionCompact(ctx) {
      if (!settings().enabled) return;
      memory.engine = step(memory.engine, { type: "compacted", context: contextMessagesOf(ctx) }).state;
    },
    async onSessionShutdown() {
      await persistWaiting((text) => process.stderr.write(`${text}\n`));
      memory.abort?.abort();
      const running = flushes.inFlight();
      if (running) await running;
    },
    onContext(event, ctx) {
      const messages = event.messages as ContextMessage[];
      const s = settings();
      if (!s.enabled) {
        statusLine.rendered(ctx, messages, messages);
        return undefined;
      }
      const sessionFile = ctx.sessionManager.getSessionFile();
      const out = step(memory.engine, {
        type: "context",
        settings: s,
        model: modelIdentity(ctx),
        messages,
        now: now(),
        facts: () => liveFacts(memory, pi, ctx, now()),
        flushInFlight: flushes.inFlight() !== undefined,
        recall: true,
        ...(sessionFile ? { spill: { thresholdBytes: s.recall.spillThresholdBytes, pathFor: (_call, sha) => spillPathFor(sessionFile, sha) } } : {}),
      });
      memory.engine = out.state;
      for (const replan of replansOf(out.effects)) {
        memory.toPersist.push(replan);
        if (replan.rewrote) memory.tally = tallyFlushRewrite(memory.tally);
      }
      const rendered = out.render ?? messages;
      statusLine.rendered(ctx, messages, rendered);
      return rendered === messages ? undefined : { messages: rendered };
    },
    onMessageEnd(message, ctx) {
      if (!settings().enabled) return;
      const out = step(memory.engine, { type: "message-end", settings: settings(), message });
      memory.engine = out.state;
      startFlushes(out.effects, ctx);
      if (message.role === "assistant") statusLine.refresh(ctx);
    },
    onBeforeProviderRequest(event, ctx) {
      const s = settings();
      if (!s.enabled) return undefined;
      const out = onProviderRequest({ memory, pi, ctx, settings: s, payload: event.payload, now: now() });
      // What the render decided is persisted now that the request is built (never from inside the render).
      const written = persistWaiting((text) => report(ctx, text, "warning"));
      return written ? written.then(() => out) : out;
    },
    // A compaction about to apply discards the warmed prefix too.
    onCacheWarmingDecision: (event) =>
      onWarmingDecision(memory, settings(), event) ?? (compactionStopsWarming(options.compactionOutlook?.(), event.action) ? { action: "stop" } : undefined),
    onTurnEnd(ctx) {
      const s = settings();
      statusLine.refresh(ctx);
      if (!s.enabled) return;
      const usage = ctx.getContextUsage();
      if (usage?.tokens == null || !usage.contextWindow) return;
      const out = step(memory.engine, { type: "turn-end", settings: s, contextTokens: usage.tokens, contextWindow: usage.contextWindow, compaction: options.compactionOutlook?.() });
      memory.engine = out.state;
      startFlushes(out.effects, ctx);
    },
    onKeeperCommand: (args, ctx) => command.handler(args, ctx),
    keeperCompletions: (prefix) => command.completions(prefix),
  };
}

/** The cold re-plans a render decided: persisted once the request is built. */
function replansOf(effects: readonly EngineEffect[]): FlushResult[] {
  return effects.flatMap((e) => (e.kind === "write-spills" && e.when === "after-request" ? [e.result] : []));
}

/** One message for everything restore had to skip or reconcile: what, and what was done. */
function restoreNotice(diagnostics: readonly string[]): string {
  const shown = diagnostics.slice(0, 3).join("; ");
  const more = diagnostics.length > 3 ? `; and ${diagnostics.length - 3} more (see /keeper)` : "";
  return `context-keeper: restored the saved state with ${diagnostics.length} problem(s) — ${shown}${more}`;
}
