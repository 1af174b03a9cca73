/**
 * The keeper's side of the host: one session runtime's memory, and the effects of each Pi
 * event on it. Decisions are the engine's (`src/engine/`); here: settings files, reading the
 * session, summarizer calls, spill files, appended entries, notifications, the status line.
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
import { thinkingPolicyFor } from "../engine/config.ts";
import type { DisciplineFacts } from "../engine/decide.ts";
import { compacted, flushesActive, observeUsage, render } from "../engine/session.ts";
import { budgetTriggerFires, closesRequest } from "../engine/triggers.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import { RECALL_TOOL_NAME } from "../prune/config.ts";
import { restoreRecallIndex } from "../recall/recall-entries.ts";
import { createRecallToolDefinition } from "../recall/tool.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS, formatDiagnostic, type SettingsDiagnostic } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { restoreState } from "../state/entries.ts";
import { formatKeeperView, type KeeperStatusSection } from "../ui/keeper-view.ts";
import { formatStats, formatThinkingPolicy } from "../ui/pruning-view.ts";
import { cacheText, liveFacts, onProviderRequest, onWarmingDecision, restoreLedger, whyText } from "./cache-edge.ts";
import { appendFlushEntries, runFlushJob, type FlushJobDeps } from "./flush-job.ts";
import { createFlushQueue } from "./flush-queue.ts";
import { emptyHostMemory, type FlushReport } from "./host-types.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";
import { loadSettingsFromDisk } from "./settings-source.ts";
import { readSpillFile } from "./spill-files.ts";

export const STATUS_KEY = "context-keeper";

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
  settings(): KeeperSettings;
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

export function createKeeperHost(pi: KeeperPi, options: { now?: () => number } = {}): KeeperHost {
  const now = options.now ?? (() => Date.now());
  let settings: KeeperSettings = DEFAULT_SETTINGS;
  let sources: string[] = [];
  let diagnostics: SettingsDiagnostic[] = [];
  const memory = emptyHostMemory();

  const jobDeps: FlushJobDeps = {
    pi,
    settings: () => settings,
    now,
    facts: (ctx) => liveFacts(memory, pi, ctx, now()),
    status: (ctx, text) => {
      if (settings.statusLine && ctx.hasUI) ctx.ui.setStatus(STATUS_KEY, text);
    },
    notify: (ctx, text, level) => report(ctx, text, level),
  };
  const flushes = createFlushQueue({
    active: (ctx) => flushesActive(settings, modelIdentity(ctx)),
    run: ({ trigger, ctx, closingMessage }) => runFlushJob({ deps: jobDeps, memory, trigger, ctx, closingMessage }),
    onFailure: (ctx, error) =>
      report(ctx, `context-keeper: flush failed (${error instanceof Error ? error.message : String(error)}); history left as it was`, "warning"),
  });

  /** Cold re-plans decided at a render: appended once the request is on its way. */
  const persistWaiting = () => {
    const waiting = memory.toPersist;
    memory.toPersist = [];
    for (const result of waiting) appendFlushEntries(pi, result);
  };

  const restore = (ctx: ExtensionContext) => {
    const branch = ctx.sessionManager.getBranch() as unknown[];
    const restored = restoreState(branch);
    const restoredRecall = restoreRecallIndex(branch);
    const context = contextMessagesOf(ctx);
    memory.diagnostics = [...restored.diagnostics, ...restoredRecall.diagnostics];
    memory.engine = { ...memory.engine, keeper: dropStateOutsideContext(restored.state, liveOccurrenceKeys(context)), recall: restoredRecall.index, lastRender: undefined };
    memory.tokensAtLastFlush = ctx.getContextUsage()?.tokens ?? 0;
    memory.toPersist = [];
    restoreLedger(memory, pi, ctx, context);
    const n = memory.diagnostics.length;
    if (n) report(ctx, `context-keeper: skipped ${n} unreadable state entr${n === 1 ? "y" : "ies"}: ${memory.diagnostics[0]}`, "warning");
  };

  const sections = (ctx: ExtensionContext): KeeperStatusSection[] => {
    const model = modelIdentity(ctx);
    return [
      { title: "thinking strip", lines: formatThinkingPolicy(model ? `${model.provider}/${model.id}` : "", thinkingPolicyFor(settings, model)) },
      { title: "pruning", lines: formatStats(memory.engine.keeper, memory.report) },
    ];
  };

  const flushNow = async (ctx: ExtensionContext): Promise<FlushReport | undefined> => {
    const running = flushes.inFlight();
    if (running) await running;
    return flushes.start({ trigger: "manual", ctx });
  };

  return {
    settings: () => settings,
    busy: () => flushes.inFlight() !== undefined,
    cacheFacts: (ctx) => liveFacts(memory, pi, ctx, now()),
    onSessionStart(ctx) {
      const loaded = loadSettingsFromDisk({ cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() });
      settings = loaded.settings;
      sources = loaded.sources;
      diagnostics = loaded.diagnostics;
      if (diagnostics.length) report(ctx, diagnostics.map(formatDiagnostic).join("\n"), "warning");
      if (!settings.enabled) return;
      restore(ctx);
      const active = pi.getActiveTools();
      if (!active.includes(RECALL_TOOL_NAME)) pi.setActiveTools([...active, RECALL_TOOL_NAME]);
    },
    recallTool: () =>
      createRecallToolDefinition({
        getStore: () => memory.engine.recall,
        getBranchMessages: rawBranchMessages,
        readSpill: readSpillFile,
        pageChars: () => settings.recall.pageChars,
      }),
    onSessionTree(ctx) {
      if (settings.enabled) restore(ctx);
    },
    onSessionCompact(ctx) {
      if (!settings.enabled) return;
      memory.engine = compacted(memory.engine, contextMessagesOf(ctx));
      memory.tokensAtLastFlush = 0;
    },
    async onSessionShutdown() {
      persistWaiting();
      memory.abort?.abort();
      const running = flushes.inFlight();
      if (running) await running;
    },
    onContext(event, ctx) {
      if (!settings.enabled) return undefined;
      const messages = event.messages as ContextMessage[];
      const out = render(memory.engine, {
        settings,
        model: modelIdentity(ctx),
        messages,
        now: now(),
        facts: () => liveFacts(memory, pi, ctx, now()),
        flushInFlight: flushes.inFlight() !== undefined,
        recall: true,
      });
      memory.engine = out.state;
      if (out.persist) memory.toPersist.push(out.persist);
      return out.rendered === messages ? undefined : { messages: out.rendered };
    },
    onMessageEnd(message, ctx) {
      if (!settings.enabled) return;
      memory.engine = observeUsage(memory.engine, message);
      if (closesRequest(message)) void flushes.start({ trigger: "request-end", ctx, closingMessage: message });
    },
    onBeforeProviderRequest(event, ctx) {
      if (!settings.enabled) return undefined;
      const out = onProviderRequest({ memory, pi, ctx, settings, payload: event.payload, now: now() });
      // What the render decided is persisted now that the request is built (never from inside the render).
      persistWaiting();
      return out;
    },
    onCacheWarmingDecision: (event) => onWarmingDecision(memory, settings, event),
    onTurnEnd(ctx) {
      if (!settings.enabled) return;
      const usage = ctx.getContextUsage();
      if (usage?.tokens == null || !usage.contextWindow) return;
      if (budgetTriggerFires({ settings, contextTokens: usage.tokens, tokensAtLastFlush: memory.tokensAtLastFlush, contextWindow: usage.contextWindow })) void flushes.start({ trigger: "budget", ctx });
    },
    async onKeeperCommand(args, ctx) {
      const sub = args.trim().split(/\s+/)[0] ?? "";
      if (sub === "stats") {
        report(ctx, formatStats(memory.engine.keeper, memory.report).join("\n"), "info");
        return;
      }
      if (sub === "now") {
        if (!settings.enabled || (!settings.pruning.enabled && !thinkingPolicyFor(settings, modelIdentity(ctx)).strip)) {
          report(ctx, "context-keeper: pruning and the thinking strip are off for this session; nothing to flush", "info");
          return;
        }
        report(ctx, "context-keeper: flushing now…", "info");
        const done = await flushNow(ctx);
        report(ctx, done ? formatStats(memory.engine.keeper, done).join("\n") : "context-keeper: nothing flushed", "info");
        return;
      }
      if (sub === "why") {
        report(ctx, whyText(memory), "info");
        return;
      }
      if (sub === "cache") {
        report(ctx, cacheText(memory), "info");
        return;
      }
      if (sub !== "") {
        report(ctx, `context-keeper: unknown subcommand "${sub}". Use /keeper, /keeper stats, /keeper now, /keeper why or /keeper cache.`, "warning");
        return;
      }
      report(ctx, formatKeeperView({ settings, sources, diagnostics, sections: sections(ctx) }), "info");
    },
  };
}
