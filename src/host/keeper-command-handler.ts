/**
 * Edge: `/keeper` and its subcommands. Parsing and every text are pure (`src/ui/`); this
 * file performs what an action asks — change the session settings, start a flush, write a
 * settings file — and shows the answer.
 */
import { join } from "node:path";
import { CONFIG_DIR_NAME, getAgentDir, type ExtensionCommandContext, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { thinkingPolicyFor } from "../engine/index.ts";
import { inertAfterSet, inertSettings } from "../settings/inert.ts";
import { didYouMean, valueAt } from "../settings/keys.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { helpText, parseKeeperCommand, type KeeperAction, type SaveTarget } from "../ui/keeper-command.ts";
import { keeperCompletions, type CompletionItem } from "../ui/keeper-completions.ts";
import { formatKeeperView, type KeeperStatusSection } from "../ui/keeper-view.ts";
import { unappliedSpendOf } from "../compaction/spend-entry.ts";
import { flushOutcomeLine, formatStats, formatThinkingPolicy, nothingToFlush, type FlushReportView } from "../ui/pruning-view.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";
import type { SessionSettings } from "./session-settings.ts";
import { changedSince, newProblems } from "../settings/file-changes.ts";
import { filesChangedText } from "../ui/save-text.ts";
import { saveOverridesToFile } from "./settings-file-write.ts";
import { loadSettingsFromDisk } from "./settings-source.ts";
import { resolveSummarizerModel } from "./summarize-effect.ts";
import type { KeeperState } from "../state/schema.ts";

export interface KeeperCommandDeps {
  settings: SessionSettings;
  pruning: {
    state(): KeeperState;
    lastReport(): FlushReportView | undefined;
    flushNow(ctx: ExtensionContext): Promise<FlushReportView | undefined>;
    /** Problems met reading the saved state or writing spill files (empty when none). */
    savedState?(): readonly string[];
  };
  cache: { whyText(detail: boolean): string; cacheText(detail: boolean): string };
  /** The extension was turned on mid-session: restore its state from the branch, activate recall. */
  activate(ctx: ExtensionContext): void;
  /** The extension was turned off mid-session: take `keeper_recall` out of the active tools. */
  deactivate(): void;
  /** Settings changed: redraw the status line. */
  refreshStatus(ctx: ExtensionContext): void;
  /** Estimated tokens the last render kept out of the request (the status line's figure). */
  prunedTokens(): number;
  report(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error"): void;
}

const show = (v: unknown): string => JSON.stringify(v);

/** "summarizer.model "x/y" was not found …" when the configured summarizer model does not exist. */
export function summarizerModelWarning(ctx: ExtensionContext, settings: KeeperSettings): string | undefined {
  if (!settings.enabled || settings.summarizer.mode === "extractive" || settings.summarizer.model === "") return undefined;
  return resolveSummarizerModel(ctx, settings.summarizer.model).notice?.replace(/^context-keeper: /, "");
}

function thinkingStripOn(settings: KeeperSettings, ctx: ExtensionContext): boolean {
  return settings.enabled && thinkingPolicyFor(settings, modelIdentity(ctx)).strip;
}

function settingsFileFor(target: SaveTarget, ctx: ExtensionContext): { path: string; label: string } | { error: string } {
  if (target === "agent") return { path: join(getAgentDir(), "settings.json"), label: "your Pi settings, read in every project" };
  if (!ctx.isProjectTrusted()) return { error: "this project is not trusted, so Pi does not read its settings file; use /keeper save agent" };
  return { path: join(ctx.cwd, CONFIG_DIR_NAME, "settings.json"), label: "this project's settings" };
}

export function createKeeperCommand(deps: KeeperCommandDeps) {
  const current = () => deps.settings.current();
  /** Models Pi can use (`provider/id`), for completions and "did you mean" on summarizer.model. */
  let models: string[] = [];
  const noteModels = (ctx: ExtensionContext) => {
    try {
      models = ctx.modelRegistry.getAvailable().map((m) => `${m.provider}/${m.id}`);
    } catch {
      models = [];
    }
  };

  const sections = (ctx: ExtensionContext): KeeperStatusSection[] => {
    const settings = current();
    const model = modelIdentity(ctx);
    const policy = thinkingPolicyFor(settings, model);
    const out: KeeperStatusSection[] = [
      { title: "thinking strip", lines: formatThinkingPolicy(model ? `${model.provider}/${model.id}` : "", policy) },
    ];
    if (settings.pruning.enabled || policy.strip)
      out.push({ title: "pruning", lines: formatStats(deps.pruning.state(), deps.pruning.lastReport(), { thinkingStrip: policy.strip }) });
    const problems = deps.pruning.savedState?.() ?? [];
    out.push({ title: "saved state", lines: problems.length ? [...problems] : ["read cleanly; every copy of a large output written"] });
    return out;
  };

  /** After `enabled` changed: switch the runtime over and say what happens on the wire. */
  function enabledChanged(ctx: ExtensionContext, was: boolean): string {
    const now = current().enabled;
    if (now === was) return now ? "it was already on" : "it was already off";
    if (now) {
      deps.activate(ctx);
      return "on from the next request: pruned history is sent again (the prompt cache is written once)";
    }
    deps.deactivate();
    return "off from the next request: history goes to the model unchanged and keeper_recall is no longer offered (the prompt cache is written once)";
  }

  function applySet(ctx: ExtensionContext, key: string, value: unknown): string {
    const before = valueAt(current(), key);
    const wasEnabled = current().enabled;
    deps.settings.set(key, value);
    const fromFiles = valueAt(deps.settings.loaded().settings, key);
    const lines = [
      `context-keeper: ${key} = ${show(value)} for this session (was ${show(before)}${show(fromFiles) !== show(before) ? `, files say ${show(fromFiles)}` : ""}). ` +
        `/keeper reset ${key} undoes it; /keeper save keeps it.`,
    ];
    if (key === "enabled") lines.push(`context-keeper is ${enabledChanged(ctx, wasEnabled)}.`);
    if (key === "summarizer.model") {
      noteModels(ctx);
      const warning = summarizerModelWarning(ctx, current());
      if (warning) lines.push(`warning: ${warning}.${didYouMean(String(value), models)}`);
    }
    for (const inert of inertAfterSet(current(), key)) lines.push(`warning: ${inert.text}.`);
    return lines.join("\n");
  }

  function applyReset(ctx: ExtensionContext, key: string | undefined): string {
    const wasEnabled = current().enabled;
    const dropped = deps.settings.reset(key);
    const lines = [
      !dropped
        ? `context-keeper: ${key ? `${key} has no session override` : "no session overrides"}; nothing to reset`
        : key
          ? `context-keeper: ${key} back to ${show(valueAt(current(), key))} (from the settings files or the default)`
          : "context-keeper: every session override dropped; the settings files and defaults apply",
    ];
    if (current().enabled !== wasEnabled) lines.push(`context-keeper is ${enabledChanged(ctx, wasEnabled)}.`);
    return lines.join("\n");
  }

  function applySave(ctx: ExtensionContext, target: SaveTarget): { text: string; level: "info" | "warning" } {
    const file = settingsFileFor(target, ctx);
    if ("error" in file) return { text: `context-keeper: not saved: ${file.error}`, level: "warning" };
    const overrides = deps.settings.overrides();
    const result = saveOverridesToFile(file.path, overrides);
    if (!result.ok) return { text: `context-keeper: not saved to ${file.path}: ${result.message}`, level: "warning" };
    const lines = [
      `context-keeper: saved to ${file.path} (${file.label}): ${result.written.join(", ")}. Other keys in the file were kept.`,
    ];
    // The files as they are now: edited since the session read them, they are reported, not applied.
    const then = deps.settings.loaded();
    const now = loadSettingsFromDisk({ cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() });
    const changes = changedSince({ then: then.settings, now: now.settings, session: current(), except: new Set(deps.settings.overriddenKeys()) });
    const changed = filesChangedText(changes, newProblems(then.diagnostics, now.diagnostics));
    if (changed.length > 0) return { text: [...lines, ...changed].join("\n"), level: "warning" };
    // Nothing else changed: the files now hold the saved values; drop the overrides they make redundant.
    deps.settings.load(now);
    const kept: string[] = [];
    for (const key of deps.settings.overriddenKeys()) {
      if (show(valueAt(deps.settings.loaded().settings, key)) === show(valueAt(overrides, key))) deps.settings.reset(key);
      else kept.push(key);
    }
    if (kept.length) lines.push(`A later settings file sets ${kept.join(", ")} differently and wins there; those stay session overrides.`);
    return { text: lines.join("\n"), level: kept.length ? "warning" : "info" };
  }

  async function run(action: KeeperAction, ctx: ExtensionCommandContext): Promise<void> {
    const settings = current();
    switch (action.kind) {
      case "error":
        deps.report(ctx, `context-keeper: ${action.message}`, "warning");
        return;
      case "help":
        deps.report(ctx, helpText(), "info");
        return;
      case "show": {
        const loaded = deps.settings.loaded();
        const warning = summarizerModelWarning(ctx, settings);
        deps.report(
          ctx,
          formatKeeperView({
            settings,
            sources: loaded.sources,
            diagnostics: loaded.diagnostics,
            layers: loaded.layers,
            ...(loaded.ignored ? { ignored: loaded.ignored } : {}),
            overrides: deps.settings.overrides(),
            warnings: [...(warning ? [warning] : []), ...inertSettings(settings).map((i) => i.text)],
            sections: sections(ctx),
            live: { contextTokens: ctx.getContextUsage()?.tokens ?? undefined, prunedTokens: deps.prunedTokens() },
          }),
          "info",
        );
        return;
      }
      case "stats":
        deps.report(ctx, formatStats(deps.pruning.state(), deps.pruning.lastReport(), { thinkingStrip: thinkingStripOn(settings, ctx), prunedTokens: deps.prunedTokens(), unappliedCompaction: unappliedSpendOf(ctx.sessionManager.getEntries()) }).join("\n"), "info");
        return;
      case "now": {
        if (!settings.enabled || (!settings.pruning.enabled && !thinkingStripOn(settings, ctx))) {
          deps.report(ctx, "context-keeper: pruning and the thinking strip are off for this session; nothing to flush", "info");
          return;
        }
        if (nothingToFlush(contextMessagesOf(ctx))) {
          deps.report(ctx, "context-keeper: nothing to flush yet — the model has not answered in this session (no flush was counted)", "info");
          return;
        }
        deps.report(ctx, "context-keeper: flushing now…", "info");
        const done = await deps.pruning.flushNow(ctx);
        const stats = done ? formatStats(deps.pruning.state(), done, { thinkingStrip: thinkingStripOn(settings, ctx), prunedTokens: deps.prunedTokens() }) : [];
        deps.report(ctx, [flushOutcomeLine(done), ...stats].join("\n"), "info");
        return;
      }
      case "why":
        deps.report(ctx, deps.cache.whyText(action.detail), "info");
        return;
      case "cache":
        deps.report(ctx, deps.cache.cacheText(action.detail), "info");
        return;
      case "on":
      case "off":
        deps.report(ctx, applySet(ctx, "enabled", action.kind === "on"), "info");
        break;
      case "set":
        deps.report(ctx, applySet(ctx, action.key, action.value), "info");
        break;
      case "reset":
        deps.report(ctx, applyReset(ctx, action.key), "info");
        break;
      case "save": {
        const saved = applySave(ctx, action.target ?? "agent");
        deps.report(ctx, saved.text, saved.level);
        break;
      }
    }
    deps.refreshStatus(ctx);
  }

  return {
    handler: (args: string, ctx: ExtensionCommandContext) => {
      noteModels(ctx);
      return run(parseKeeperCommand(args), ctx);
    },
    noteModels,
    completions: (prefix: string): CompletionItem[] | null =>
      keeperCompletions(prefix, { settings: current(), overridden: deps.settings.overriddenKeys(), models }),
  };
}
