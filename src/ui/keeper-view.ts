/**
 * Pure text for `/keeper`: on or off and why, where the settings came from, only the keys
 * that differ from the defaults (session overrides marked), problems, then the sections of
 * the features that apply.
 */
import { SETTING_KEYS, valueAt } from "../settings/keys.ts";
import { overrideLeaves } from "../settings/overrides.ts";
import { formatDiagnostic, type PartialSettings, type SettingsDiagnostic } from "../settings/parse.ts";
import type { IgnoredSettingsFile } from "../settings/load.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { keptOutLine } from "./pruning-view.ts";

export interface KeeperStatusSection {
  title: string;
  lines: string[];
}

export interface KeeperViewInput {
  /** Settings in effect (files, then session overrides). */
  settings: KeeperSettings;
  sources: string[];
  diagnostics: SettingsDiagnostic[];
  /** What each settings file set, in the order applied; absent: origins are not shown. */
  layers?: ReadonlyArray<{ source: string; partial: PartialSettings }>;
  /** Session overrides (`/keeper set|on|off`). */
  overrides?: PartialSettings;
  /** Settings files that exist but were not read (an untrusted project's). */
  ignored?: readonly IgnoredSettingsFile[];
  /** Problems found outside the settings files (a summarizer model that does not exist, a setting with no effect). */
  warnings?: string[];
  /** Sections contributed by features (thinking strip, pruning...); shown only when enabled. */
  sections: KeeperStatusSection[];
  /** The status line's figures: Pi's context estimate and what the keeper keeps out of it. */
  live?: { contextTokens: number | undefined; prunedTokens: number };
}

const int = (n: number): string => Math.round(n).toLocaleString("en-US");

function liveLines(live: NonNullable<KeeperViewInput["live"]>): string[] {
  const ctx = live.contextTokens === undefined ? "context size not known yet (no answer since the last compaction)" : `${int(live.contextTokens)} tokens in context (Pi's estimate)`;
  return [`now: ${ctx}`, keptOutLine(live.prunedTokens)];
}

/** "the project's settings were ignored: project not trusted (…)" for each file Pi did not read. */
function ignoredLines(input: KeeperViewInput): string[] {
  return (input.ignored ?? []).map(
    (f) =>
      `the project's settings were ignored: ${f.reason} (${f.source}${f.setsKeeper ? " sets contextKeeper" : ""}; to use them: /trust in Pi, then start it again, or pi --approve)`,
  );
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function originOf(path: string, input: KeeperViewInput): string | undefined {
  let origin: string | undefined;
  for (const layer of input.layers ?? []) if (valueAt(layer.partial, path) !== undefined) origin = layer.source;
  return origin;
}

function headline(input: KeeperViewInput): string {
  if (input.settings.enabled) return "context-keeper: on";
  const overridden = valueAt(input.overrides ?? {}, "enabled") === false;
  return overridden
    ? "context-keeper: off for this session (/keeper on turns it back on); history goes to the model unchanged"
    : `context-keeper: off (enabled = false in ${originOf("enabled", input) ?? "the settings"}); history goes to the model unchanged`;
}

function changedLines(input: KeeperViewInput): string[] {
  const overridden = new Set(overrideLeaves(input.overrides ?? {}).map(([path]) => path));
  const rows: Array<{ mark: string; text: string; origin: string }> = [];
  for (const key of SETTING_KEYS) {
    const value = valueAt(input.settings, key.path);
    const isOverride = overridden.has(key.path);
    if (!isOverride && same(value, key.defaultValue)) continue;
    const file = originOf(key.path, input);
    const origin = isOverride ? `session override${file ? `; ${file} says ${JSON.stringify(valueAt(layerValue(input, key.path), key.path))}` : ""}` : file ? `from ${file}` : "";
    rows.push({ mark: isOverride ? "*" : " ", text: `${key.path} = ${JSON.stringify(value)}`, origin: `${origin}${same(value, key.defaultValue) ? " (same as the default)" : ` (default ${JSON.stringify(key.defaultValue)})`}` });
  }
  if (rows.length === 0) return ["settings: all defaults (/keeper set <key> <value> changes one for this session; Tab completes)"];
  const width = Math.max(...rows.map((r) => r.text.length));
  const header =
    overridden.size > 0
      ? "changed from the defaults (* = session override: /keeper reset undoes, /keeper save keeps it):"
      : "changed from the defaults:";
  return [header, ...rows.map((r) => `  ${r.mark} ${r.text.padEnd(width)}  ${r.origin}`.trimEnd())];
}

/** The last layer that set `path`, as a tree. */
function layerValue(input: KeeperViewInput, path: string): PartialSettings {
  let found: PartialSettings = {};
  for (const layer of input.layers ?? []) if (valueAt(layer.partial, path) !== undefined) found = layer.partial;
  return found;
}

export function formatKeeperView(input: KeeperViewInput): string {
  const lines: string[] = [headline(input)];
  if (input.live && input.settings.enabled) lines.push(...liveLines(input.live));
  const overrideCount = overrideLeaves(input.overrides ?? {}).length;
  // A file that was read but sets nothing of ours is not a source worth naming.
  const setting = input.layers ? input.layers.filter((l) => Object.keys(l.partial).length > 0).map((l) => l.source) : input.sources;
  const from = [...setting, ...(overrideCount > 0 ? [`${overrideCount} session override${overrideCount === 1 ? "" : "s"}`] : [])];
  const nothingRead = input.ignored?.length ? "defaults only" : "defaults only (no contextKeeper in any settings file)";
  lines.push(`settings from: ${from.length ? `defaults, then ${from.join(", then ")}` : nothingRead}`);
  lines.push(...ignoredLines(input));
  if (input.diagnostics.length) {
    lines.push("settings problems (defaults used for these keys):");
    for (const d of input.diagnostics) lines.push(`  ${formatDiagnostic(d)}`);
  }
  for (const w of input.warnings ?? []) lines.push(`warning: ${w}`);
  lines.push(...changedLines(input));
  if (input.settings.enabled) {
    for (const section of input.sections) {
      if (section.lines.length === 0) continue;
      lines.push(`${section.title}:`);
      for (const line of section.lines) lines.push(`  ${line}`);
    }
  }
  return lines.join("\n");
}
