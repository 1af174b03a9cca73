/**
 * The shell: holds the extension's in-memory state for one session runtime and turns Pi
 * events into calls on the pure core. Effects (settings files, notifications) stay here.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext, SessionStartEvent } from "@earendil-works/pi-coding-agent";
import { DEFAULT_SETTINGS, formatDiagnostic, type SettingsDiagnostic } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { formatKeeperView, type KeeperStatusSection } from "../ui/keeper-view.ts";
import { loadSettingsFromDisk } from "./settings-source.ts";

export interface KeeperShell {
  onSessionStart(event: SessionStartEvent, ctx: ExtensionContext): void;
  onKeeperCommand(args: string, ctx: ExtensionCommandContext): Promise<void>;
  settings(): KeeperSettings;
}

function report(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error"): void {
  if (ctx.hasUI) ctx.ui.notify(text, level);
  else process.stderr.write(`${text}\n`);
}

export function createKeeperShell(_pi: ExtensionAPI): KeeperShell {
  let settings: KeeperSettings = DEFAULT_SETTINGS;
  let sources: string[] = [];
  let diagnostics: SettingsDiagnostic[] = [];

  const statusSections = (): KeeperStatusSection[] => [];

  return {
    settings: () => settings,
    onSessionStart(_event, ctx) {
      const loaded = loadSettingsFromDisk({ cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() });
      settings = loaded.settings;
      sources = loaded.sources;
      diagnostics = loaded.diagnostics;
      if (diagnostics.length) report(ctx, diagnostics.map(formatDiagnostic).join("\n"), "warning");
    },
    async onKeeperCommand(_args, ctx) {
      report(ctx, formatKeeperView({ settings, sources, diagnostics, sections: statusSections() }), "info");
    },
  };
}
