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
import { thinkingPolicyFor } from "../keeper/config.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS, formatDiagnostic, type SettingsDiagnostic } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { formatKeeperView, type KeeperStatusSection } from "../ui/keeper-view.ts";
import { formatStats, formatThinkingPolicy } from "../ui/pruning-view.ts";
import { createCacheRuntime } from "./cache-runtime.ts";
import { contextMessagesOf, createPruningRuntime, modelIdentity } from "./pruning-runtime.ts";
import { RECALL_TOOL_NAME } from "../prune/config.ts";
import { createRecallToolDefinition } from "../recall/tool.ts";
import { readSpillFile } from "./spill-files.ts";
import { loadSettingsFromDisk } from "./settings-source.ts";

export const STATUS_KEY = "context-keeper";

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
  let settings: KeeperSettings = DEFAULT_SETTINGS;
  let sources: string[] = [];
  let diagnostics: SettingsDiagnostic[] = [];

  const cache = createCacheRuntime({ pi, settings: () => settings, state: () => pruning.state() });
  const pruning = createPruningRuntime({
    pi,
    settings: () => settings,
    status: (ctx, text) => {
      if (settings.statusLine && ctx.hasUI) ctx.ui.setStatus(STATUS_KEY, text);
    },
    notify: (ctx, text, level) => report(ctx, text, level),
    discipline: cache,
  });

  const sections = (ctx: ExtensionContext): KeeperStatusSection[] => {
    const model = modelIdentity(ctx);
    return [
      { title: "thinking strip", lines: formatThinkingPolicy(model ? `${model.provider}/${model.id}` : "", thinkingPolicyFor(settings, model)) },
      { title: "pruning", lines: formatStats(pruning.state(), pruning.lastReport()) },
      { title: "saved state", lines: pruning.diagnostics().length ? pruning.diagnostics() : ["read cleanly; every spill written"] },
    ];
  };

  return {
    settings: () => settings,
    onSessionStart(_event, ctx) {
      const loaded = loadSettingsFromDisk({ cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() });
      settings = loaded.settings;
      sources = loaded.sources;
      diagnostics = loaded.diagnostics;
      if (diagnostics.length) report(ctx, diagnostics.map(formatDiagnostic).join("\n"), "warning");
      if (settings.enabled) {
        pruning.restore(ctx);
        const active = pi.getActiveTools();
        if (!active.includes(RECALL_TOOL_NAME)) pi.setActiveTools([...active, RECALL_TOOL_NAME]);
        cache.restore(ctx, contextMessagesOf(ctx));
      }
    },
    recallTool: () =>
      createRecallToolDefinition({
        getStore: () => pruning.recallIndex(),
        getBranchMessages: rawBranchMessages,
        readSpill: readSpillFile,
        pageChars: () => settings.recall.pageChars,
      }),
    onSessionTree(ctx) {
      if (!settings.enabled) return;
      pruning.restore(ctx);
      cache.restore(ctx, contextMessagesOf(ctx));
    },
    onSessionCompact(ctx) {
      if (!settings.enabled) return;
      pruning.afterCompaction(ctx);
      cache.onCompaction();
    },
    onSessionShutdown: () => pruning.shutdown(),
    onContext(event, ctx) {
      const out = pruning.render(event, ctx);
      if (settings.enabled) cache.onContextRendered(out?.messages ?? (event.messages as ContextMessage[]));
      return out;
    },
    onMessageEnd(message, ctx) {
      if (!settings.enabled) return;
      cache.onAssistantMessage(message);
      pruning.onAssistantMessageEnd(message, ctx);
    },
    onBeforeProviderRequest: (event, ctx) => cache.onBeforeProviderRequest(event.payload, ctx),
    onCacheWarmingDecision: (event) => cache.onCacheWarmingDecision(event),
    onTurnEnd(ctx) {
      if (settings.enabled) pruning.onTurnEnd(ctx);
    },
    async onKeeperCommand(args, ctx) {
      const sub = args.trim().split(/\s+/)[0] ?? "";
      if (sub === "stats") {
        report(ctx, formatStats(pruning.state(), pruning.lastReport()).join("\n"), "info");
        return;
      }
      if (sub === "now") {
        if (!settings.enabled || (!settings.pruning.enabled && !thinkingPolicyFor(settings, modelIdentity(ctx)).strip)) {
          report(ctx, "context-keeper: pruning and the thinking strip are off for this session; nothing to flush", "info");
          return;
        }
        report(ctx, "context-keeper: flushing now…", "info");
        const done = await pruning.flushNow(ctx);
        report(ctx, done ? formatStats(pruning.state(), done).join("\n") : "context-keeper: nothing flushed", "info");
        return;
      }
      if (sub === "why") {
        report(ctx, cache.whyText(), "info");
        return;
      }
      if (sub === "cache") {
        report(ctx, cache.cacheText(), "info");
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
