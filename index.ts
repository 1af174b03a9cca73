/**
 * pi-context-keeper: the Pi extension entry. Wiring only — every decision lives in `src/`.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerKeeperCompaction } from "./src/compaction/register.ts";
import { createKeeperShell } from "./src/shell/keeper-shell.ts";

export default function contextKeeper(pi: ExtensionAPI): void {
  const shell = createKeeperShell(pi);

  pi.on("session_start", (event, ctx) => shell.onSessionStart(event, ctx));
  pi.registerCommand("keeper", {
    description: "context-keeper: settings, status and stats (/keeper)",
    handler: (args, ctx) => shell.onKeeperCommand(args, ctx),
  });

  registerKeeperCompaction(pi, {
    isActive: () => shell.settings().enabled && shell.settings().compaction.enabled,
  });
}
