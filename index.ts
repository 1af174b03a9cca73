/**
 * pi-context-keeper: the Pi extension entry. Wiring only — every decision lives in `src/`.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { CompactionController } from "./src/compaction/controller.ts";
import { registerKeeperCompaction } from "./src/compaction/register.ts";
import type { ContextMessage } from "./src/session/messages.ts";
import { createKeeperShell } from "./src/shell/keeper-shell.ts";

export default function contextKeeper(pi: ExtensionAPI): void {
  // Bound below, once registered: the pruning budget trigger consults async compaction.
  let compaction: CompactionController | undefined;
  const shell = createKeeperShell(pi, { compactionOutlook: () => compaction?.outlook() });

  pi.on("session_start", (event, ctx) => shell.onSessionStart(event, ctx));
  pi.on("session_tree", (_event, ctx) => shell.onSessionTree(ctx));
  pi.on("session_compact", (_event, ctx) => shell.onSessionCompact(ctx));
  pi.on("session_shutdown", () => shell.onSessionShutdown());
  pi.on("context", (event, ctx) => shell.onContext(event, ctx));
  pi.on("message_end", (event, ctx) => shell.onMessageEnd(event.message as ContextMessage, ctx));
  pi.on("turn_end", (_event, ctx) => shell.onTurnEnd(ctx));
  pi.on("before_provider_request", (event, ctx) => shell.onBeforeProviderRequest(event, ctx));
  pi.on("cache_warming_decision", (event, ctx) => shell.onCacheWarmingDecision(event, ctx));
  pi.registerTool({ ...shell.recallTool(), defaultActive: false });
  pi.registerCommand("keeper", {
    description:
      "context-keeper: settings and status (/keeper), stats (/keeper stats), flush now (/keeper now), gate decisions (/keeper why), cache layers and busts (/keeper cache)",
    handler: (args, ctx) => shell.onKeeperCommand(args, ctx),
  });

  compaction = registerKeeperCompaction(pi, {
    isActive: () => shell.settings().enabled && shell.settings().compaction.enabled,
  });
}
