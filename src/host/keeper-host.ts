/**
 * The keeper's side of the host: one session runtime's handles (the engine's state cell, the
 * flush queue, the summarizer's cache and abort, the status line) and its parts' handlers —
 * `settings`, `pruning` (thinking runs inside its renders and flushes, guarded by the
 * engine), `cache` and `ui` — each stepping the engine and performing the effects it returns.
 * Decisions are the engine's (`src/engine/`); here: settings files, reading the session,
 * summarizer calls, spill files, appended entries, notifications, the status line
 * (`status-runtime.ts`), the session's settings with `/keeper set` overrides
 * (`session-settings.ts`) and the `/keeper` actions (`keeper-command-handler.ts`).
 * `hooks.ts` maps each Pi event to the handlers it runs, in order.
 */
import type {
  BeforeProviderRequestEvent,
  CacheWarmingDecisionEvent,
  ContextWithSystemEvent,
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
} from "@earendil-works/pi-coding-agent";
import { cacheViewOf, flushesActive, keeperRender, type DisciplineFacts, type EngineEffect, type FlushReport } from "../engine/index.ts";
import { RECALL_TOOL_NAME } from "../prune/config.ts";
import { createRecallToolDefinition } from "../recall/tool.ts";
import { purgedArgumentsOnlyKeys } from "../recall/pruned-calls.ts";
import type { ContextMessage } from "../session/messages.ts";
import { formatDiagnostic } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { formatCacheView } from "../ui/cache-view.ts";
import type { CompletionItem } from "../ui/keeper-completions.ts";
import { formatWhyView } from "../ui/why-view.ts";
import { cacheKeyOf, keyParts, liveCacheRule, liveFacts } from "./cache-edge.ts";
import { commitColdReplans } from "./cold-replan-persist.ts";
import { createEngineCell, type EngineCell } from "./engine-cell.ts";
import { appendEntries, runFlushJob, type FlushJobDeps } from "./flush-job.ts";
import { createFlushQueue } from "./flush-queue.ts";
import { createKeeperCommand, summarizerModelWarning } from "./keeper-command-handler.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";
import { createSessionSettings } from "./session-settings.ts";
import { loadSettingsFromDisk } from "./settings-source.ts";
import { readSpillFile, spillPathFor, writeSpillFile } from "./spill-files.ts";
import { createStatusRuntime } from "./status-runtime.ts";

export type KeeperPi = Pick<ExtensionAPI, "appendEntry" | "getThinkingLevel" | "getActiveTools" | "setActiveTools">;

/** The keeper's parts, as `hooks.ts` runs them: one handler per Pi event each part listens to. */
export interface KeeperParts {
  /** The "settings" part. */
  setup: {
    /** Read the settings files; say what they got wrong, and a summarizer model that does not exist. */
    sessionStart(ctx: ExtensionContext): void;
  };
  pruning: {
    /** With the extension on: restore the state from the branch, activate `keeper_recall`; off: deactivate it (a resumed session's loadout may hold it). */
    sessionStart(ctx: ExtensionContext): void;
    sessionTree(ctx: ExtensionContext): void;
    sessionCompact(ctx: ExtensionContext): void;
    /** Commit what waits, stop the summarizer, let a running flush finish. */
    sessionShutdown(): Promise<void>;
    /**
     * The render (the thinking strip inside it) of the full transcript (`context_with_system`:
     * Pi's system messages in place, passed through): the messages to send, or undefined to keep them.
     */
    context(event: ContextWithSystemEvent, ctx: ExtensionContext): { messages: ContextMessage[] } | undefined;
    /** An answer that closes the user's request starts a flush. */
    messageEnd(message: ContextMessage, ctx: ExtensionContext): void;
    /** The budget trigger, else the in-loop trigger (its flush awaited: Pi waits for it). */
    turnEnd(ctx: ExtensionContext): Promise<void> | undefined;
    /** The request is built: commit the cold re-plans its render adopted. */
    requestBuilt(ctx: ExtensionContext): Promise<void> | undefined;
  };
  cache: {
    /** The provider's usage of the answer (unannounced cache losses). */
    usage(message: ContextMessage): void;
    /** Seam mark, request facts and fingerprints; `undefined` keeps the payload. */
    beforeRequest(event: BeforeProviderRequestEvent, ctx: ExtensionContext): unknown;
    /** Do not pay to keep warm a prefix a waiting rewrite discards. */
    warming(event: CacheWarmingDecisionEvent): { action: "stop" } | undefined;
  };
  ui: {
    /** The status line after a render, an answer, a turn end. */
    rendered(event: ContextWithSystemEvent, ctx: ExtensionContext): void;
    answered(message: ContextMessage, ctx: ExtensionContext): void;
    refresh(ctx: ExtensionContext): void;
    /** The context changed without a request (session start or resume, `/tree`, a compaction): figures from a fresh render of the branch. */
    recount(ctx: ExtensionContext): void;
  };
}

export interface KeeperHost extends KeeperParts {
  /** The engine's state cell this runtime steps (shared with async compaction's part). */
  cell: EngineCell;
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
  /** Perform the engine's notify effects (and any other it gives outside a flush). */
  perform(effects: readonly EngineEffect[], ctx: ExtensionContext): void;
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
  /** The engine's state cell (default: a new one). */
  cell?: EngineCell;
}

export function createKeeperHost(pi: KeeperPi, options: KeeperHostOptions = {}): KeeperHost {
  const now = options.now ?? (() => Date.now());
  const cell = options.cell ?? createEngineCell();
  const store = createSessionSettings();
  const settings = (): KeeperSettings => store.current();
  const statusLine = createStatusRuntime({ settings, summarizerCost: () => cell.get().keeper.stats.summarizerCost });
  const running: { abort?: AbortController } = {};
  const perform = (effects: readonly EngineEffect[], ctx: ExtensionContext) => {
    for (const e of effects) if (e.kind === "notify") report(ctx, e.text, e.level);
    appendEntries(pi, effects);
  };

  const jobDeps: FlushJobDeps = {
    pi,
    cell,
    settings,
    now,
    facts: (ctx) => liveFacts(cell.get(), pi, ctx, now()),
    summaryCache: new Map(),
    running,
    status: (ctx, progress) => statusLine.progress(ctx, progress),
    rendered: (ctx, raw, rendered) => statusLine.rendered(ctx, raw, rendered),
    perform,
  };
  const flushes = createFlushQueue({
    active: (ctx) => flushesActive(settings(), modelIdentity(ctx)),
    run: ({ trigger, ctx, closingMessage }) => runFlushJob({ deps: jobDeps, trigger, ctx, closingMessage }),
    // The pruning part failed at a flush: told once per session runtime, like any part's throw.
    onFailure: (ctx, error) =>
      perform(
        cell.step({ type: "notice", key: "fault:pruning", text: `context-keeper: flush failed (${error instanceof Error ? error.message : String(error)}); history left as it was — this is reported once`, level: "warning" }).effects,
        ctx,
      ),
  });

  /** Cold re-plans handed out by a step: spill files, then entries. */
  const commitReplans = (effects: readonly EngineEffect[], warn: (effects: readonly EngineEffect[]) => void): Promise<void> | undefined => {
    const pending = effects.flatMap((e) => (e.kind === "commit-replans" ? [commitColdReplans({ pi, cell, results: e.results, write: writeSpillFile, perform: warn })] : []));
    const waits = pending.filter((p): p is Promise<void> => p !== undefined);
    return waits.length > 0 ? Promise.all(waits).then(() => undefined) : undefined;
  };

  /** The engine's `flush` effects: queued, one at a time. */
  const startFlushes = (effects: readonly EngineEffect[], ctx: ExtensionContext) => {
    for (const e of effects) if (e.kind === "flush") void flushes.start({ trigger: e.trigger, ctx, ...(e.closingMessage ? { closingMessage: e.closingMessage } : {}) });
  };

  const restore = (ctx: ExtensionContext) => {
    perform(
      cell.step({ type: "restored", branch: ctx.sessionManager.getBranch() as unknown[], context: contextMessagesOf(ctx), key: keyParts(pi, ctx.model), contextTokens: ctx.getContextUsage()?.tokens ?? 0 }).effects,
      ctx,
    );
  };

  /**
   * `keeper_recall` in Pi's active tools exactly when the keeper is on. Pi restores the loadout a
   * session recorded (at a resume and a tree navigation), so a keeper session resumed with the
   * keeper off would still declare the tool: it is taken out here, and put back when on.
   */
  const syncRecallTool = (on: boolean) => {
    const active = pi.getActiveTools();
    if (on && !active.includes(RECALL_TOOL_NAME)) pi.setActiveTools([...active, RECALL_TOOL_NAME]);
    if (!on && active.includes(RECALL_TOOL_NAME)) pi.setActiveTools(active.filter((name) => name !== RECALL_TOOL_NAME));
  };

  /** Session start with the extension on, or `/keeper on` mid-session: restore from the branch, activate recall. */
  const activate = (ctx: ExtensionContext) => {
    restore(ctx);
    syncRecallTool(true);
  };

  const flushNow = async (ctx: ExtensionContext): Promise<FlushReport | undefined> => {
    const inFlight = flushes.inFlight();
    if (inFlight) await inFlight;
    return flushes.start({ trigger: "manual", ctx });
  };

  /** What the keeper would send for the branch now (pure: nothing recorded or persisted). */
  const sentContext = (messages: ContextMessage[], ctx: ExtensionContext): ContextMessage[] => {
    const s = settings();
    return s.enabled ? keeperRender({ messages, state: cell.get().keeper, settings: s, model: modelIdentity(ctx) }) : messages;
  };
  /** The status line's figures from the branch as it is now, rendered when first shown or asked for. */
  const recountStatus = (ctx: ExtensionContext) =>
    statusLine.recount(ctx, () => {
      const raw = contextMessagesOf(ctx);
      return { raw, rendered: sentContext(raw, ctx) };
    });

  const command = createKeeperCommand({
    settings: store,
    pruning: { state: () => cell.get().keeper, lastReport: () => cell.get().lastFlush, flushNow, savedState: () => cell.get().problems },
    cache: {
      whyText: (detail) => formatWhyView(cell.get().gateLog, { detail }),
      cacheText: (detail) => formatCacheView(cacheViewOf(cell.get().wire, cell.get().keeper.stats.rewritesCaused), { detail }),
    },
    activate,
    deactivate: () => syncRecallTool(false),
    refreshStatus: recountStatus,
    prunedTokens: () => statusLine.prunedTokens(),
    report,
  });

  return {
    cell,
    settings,
    perform,
    sentContext,
    busy: () => flushes.inFlight() !== undefined,
    cacheFacts: (ctx) => liveFacts(cell.get(), pi, ctx, now()),
    recallTool: () =>
      createRecallToolDefinition({
        getStore: () => cell.get().recall,
        getBranchMessages: rawBranchMessages,
        readSpill: readSpillFile,
        pageChars: () => settings().recall.pageChars,
        purgedArguments: () => purgedArgumentsOnlyKeys(cell.get().keeper),
      }),
    onKeeperCommand: (args, ctx) => command.handler(args, ctx),
    keeperCompletions: (prefix) => command.completions(prefix),

    setup: {
      sessionStart(ctx) {
        store.load(loadSettingsFromDisk({ cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() }));
        const diagnostics = store.loaded().diagnostics;
        if (diagnostics.length) report(ctx, diagnostics.map(formatDiagnostic).join("\n"), "warning");
        // The same text the first flush would give: said once per session.
        const modelWarning = summarizerModelWarning(ctx, settings());
        if (modelWarning) perform(cell.step({ type: "notice", text: `context-keeper: ${modelWarning}`, level: "warning" }).effects, ctx);
        command.noteModels(ctx);
      },
    },

    pruning: {
      sessionStart(ctx) {
        if (settings().enabled) activate(ctx);
        else syncRecallTool(false);
      },
      sessionTree(ctx) {
        // Pi restored the branch's recorded loadout before this event.
        if (settings().enabled) activate(ctx);
        else syncRecallTool(false);
      },
      sessionCompact(ctx) {
        if (settings().enabled) cell.step({ type: "compacted", context: contextMessagesOf(ctx) });
      },
      async sessionShutdown() {
        await commitReplans(cell.step({ type: "shutdown" }).effects, (effects) => {
          for (const e of effects) if (e.kind === "notify") process.stderr.write(`${e.text}\n`);
        });
        running.abort?.abort();
        const inFlight = flushes.inFlight();
        if (inFlight) await inFlight;
      },
      context(event, ctx) {
        const messages = event.messages as ContextMessage[];
        const s = settings();
        if (!s.enabled) return undefined;
        const sessionFile = ctx.sessionManager.getSessionFile();
        const out = cell.step({
          type: "context",
          settings: s,
          model: modelIdentity(ctx),
          messages,
          now: now(),
          facts: () => liveFacts(cell.get(), pi, ctx, now()),
          flushInFlight: flushes.inFlight() !== undefined,
          recall: true,
          ...(sessionFile ? { spill: { thresholdBytes: s.recall.spillThresholdBytes, pathFor: (_call, sha) => spillPathFor(sessionFile, sha) } } : {}),
        });
        perform(out.effects, ctx);
        const rendered = out.render ?? messages;
        return rendered === messages ? undefined : { messages: rendered };
      },
      messageEnd(message, ctx) {
        if (!settings().enabled) return;
        startFlushes(cell.step({ type: "message-end", settings: settings(), message }).effects, ctx);
      },
      turnEnd(ctx) {
        const s = settings();
        if (!s.enabled) return undefined;
        const usage = ctx.getContextUsage();
        if (usage?.tokens == null || !usage.contextWindow) return undefined;
        const out = cell.step({
          type: "turn-end",
          settings: s,
          contextTokens: usage.tokens,
          contextWindow: usage.contextWindow,
          context: () => contextMessagesOf(ctx),
          facts: () => liveFacts(cell.get(), pi, ctx, now()),
        });
        // A flush inside the loop summarizes extractively: Pi waits for it (turn_end is awaited), so
        // its rewrite lands on the very next request, as the replay has it. Behind a running flush
        // (a model summary) it is only queued: the loop never waits on a model call.
        const inLoop = out.effects.some((e) => e.kind === "flush" && e.trigger === "loop");
        if (inLoop && !flushes.inFlight()) return flushes.start({ trigger: "loop", ctx }).then(() => undefined);
        startFlushes(out.effects, ctx);
        return undefined;
      },
      requestBuilt(ctx) {
        // What the render decided is persisted now that the request is built (never from inside the render).
        return commitReplans(cell.step({ type: "request-built" }).effects, (effects) => perform(effects, ctx));
      },
    },

    cache: {
      usage(message) {
        if (settings().enabled) cell.step({ type: "usage", message });
      },
      beforeRequest(event, ctx) {
        const s = settings();
        if (!s.enabled) return undefined;
        const at = now();
        const model = ctx.model ? { api: ctx.model.api, id: ctx.model.id } : undefined;
        const out = cell.step({ type: "before-request", settings: s, model, payload: event.payload, key: cacheKeyOf(pi, ctx, at), rule: liveCacheRule(ctx) });
        return out.request?.body;
      },
      warming: (event) => (cell.step({ type: "warming", settings: settings(), decision: event }).warming ? { action: "stop" } : undefined),
    },

    ui: {
      rendered(event, ctx) {
        const messages = event.messages as ContextMessage[];
        const last = cell.get().lastRender;
        statusLine.rendered(ctx, messages, settings().enabled && last?.raw === messages ? last.rendered : messages);
      },
      answered(message, ctx) {
        if (settings().enabled && message.role === "assistant") statusLine.refresh(ctx);
      },
      refresh: (ctx) => statusLine.refresh(ctx),
      recount: recountStatus,
    },
  };
}
