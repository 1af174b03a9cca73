/**
 * The shell: holds the extension's in-memory state for one session runtime and turns Pi
 * events into calls on the pure core. Effects (settings files, notifications, the status
 * line, session writes) stay here.
 */
import type {
  BeforeProviderRequestEvent,
  CacheWarmingDecisionEvent,
  ContextEvent,
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  SessionStartEvent,
} from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { formatDiagnostic } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { CompletionItem } from "../ui/keeper-completions.ts";
import { createCacheRuntime } from "./cache-runtime.ts";
import { createKeeperCommand, summarizerModelWarning } from "./keeper-command-handler.ts";
import { contextMessagesOf, createPruningRuntime } from "./pruning-runtime.ts";
import { createSessionSettings } from "./session-settings.ts";
import { createStatusRuntime } from "./status-runtime.ts";
import { RECALL_TOOL_NAME } from "../prune/config.ts";
import { createRecallToolDefinition } from "../recall/tool.ts";
import { readSpillFile } from "./spill-files.ts";
import { loadSettingsFromDisk } from "./settings-source.ts";

export interface KeeperShell {
  onSessionStart(event: SessionStartEvent, ctx: ExtensionContext): void;
  onSessionTree(ctx: ExtensionContext): void;
  onSessionCompact(ctx: ExtensionContext): void;
  onSessionShutdown(): Promise<void>;
  onContext(event: ContextEvent, ctx: ExtensionContext): { messages: ContextMessage[] } | undefined;
  onMessageEnd(message: ContextMessage, ctx: ExtensionContext): void;
  onTurnEnd(ctx: ExtensionContext): void;
  /** Seam mark, request facts and fingerprints; `undefined` keeps the payload. */
  onBeforeProviderRequest(event: BeforeProviderRequestEvent, ctx: ExtensionContext): unknown;
  onCacheWarmingDecision(event: CacheWarmingDecisionEvent, ctx: ExtensionContext): { action: "stop" } | undefined;
  onKeeperCommand(args: string, ctx: ExtensionCommandContext): Promise<void>;
  /** Argument completions for `/keeper` (Pi passes the text typed after "/keeper "). */
  keeperCompletions(prefix: string): CompletionItem[] | null;
  settings(): KeeperSettings;
  /** The `keeper_recall` tool, registered inactive; activated at session start when enabled. */
  recallTool(): ReturnType<typeof createRecallToolDefinition>;
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

export function createKeeperShell(pi: ExtensionAPI): KeeperShell {
  const store = createSessionSettings();
  const settings = (): KeeperSettings => store.current();

  const cache = createCacheRuntime({ pi, settings, state: () => pruning.state() });
  const statusLine = createStatusRuntime({ settings, summarizerCost: () => pruning.state().stats.summarizerCost });
  const pruning = createPruningRuntime({
    pi,
    settings,
    status: (ctx, progress) => statusLine.progress(ctx, progress),
    rendered: (ctx, raw, rendered) => statusLine.rendered(ctx, raw, rendered),
    notify: (ctx, text, level) => report(ctx, text, level),
    discipline: cache,
  });
  const activate = (ctx: ExtensionContext) => {
    pruning.restore(ctx);
    const active = pi.getActiveTools();
    if (!active.includes(RECALL_TOOL_NAME)) pi.setActiveTools([...active, RECALL_TOOL_NAME]);
    cache.restore(ctx, contextMessagesOf(ctx));
  };
  const command = createKeeperCommand({ settings: store, pruning, cache, activate, refreshStatus: (ctx) => statusLine.refresh(ctx), prunedTokens: () => statusLine.prunedTokens(), report });

  return {
    settings,
    onSessionStart(_event, ctx) {
      store.load(loadSettingsFromDisk({ cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() }));
      const diagnostics = store.loaded().diagnostics;
      if (diagnostics.length) report(ctx, diagnostics.map(formatDiagnostic).join("\n"), "warning");
      const modelWarning = summarizerModelWarning(ctx, settings());
      if (modelWarning) report(ctx, `context-keeper: ${modelWarning}`, "warning");
      if (settings().enabled) activate(ctx);
      command.noteModels(ctx);
      statusLine.refresh(ctx);
    },
    recallTool: () =>
      createRecallToolDefinition({
        getStore: () => pruning.recallIndex(),
        getBranchMessages: rawBranchMessages,
        readSpill: readSpillFile,
        pageChars: () => settings().recall.pageChars,
      }),
    onSessionTree(ctx) {
      if (!settings().enabled) return;
      pruning.restore(ctx);
      cache.restore(ctx, contextMessagesOf(ctx));
    },
    onSessionCompact(ctx) {
      if (!settings().enabled) return;
      pruning.afterCompaction(ctx);
      cache.onCompaction();
    },
    onSessionShutdown: () => pruning.shutdown(),
    onContext(event, ctx) {
      const out = pruning.render(event, ctx);
      const raw = event.messages as ContextMessage[];
      if (settings().enabled) cache.onContextRendered(out?.messages ?? raw);
      statusLine.rendered(ctx, raw, out?.messages ?? raw);
      return out;
    },
    onMessageEnd(message, ctx) {
      if (!settings().enabled) return;
      cache.onAssistantMessage(message);
      pruning.onAssistantMessageEnd(message, ctx);
      if (message.role === "assistant") statusLine.refresh(ctx);
    },
    onBeforeProviderRequest: (event, ctx) => cache.onBeforeProviderRequest(event.payload, ctx),
    onCacheWarmingDecision: (event) => cache.onCacheWarmingDecision(event),
    onTurnEnd(ctx) {
      if (settings().enabled) pruning.onTurnEnd(ctx);
      statusLine.refresh(ctx);
    },
    onKeeperCommand: (args, ctx) => command.handler(args, ctx),
    keeperCompletions: (prefix) => command.completions(prefix),
  };
}
