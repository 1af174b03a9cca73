/**
 * Reading `contextKeeper` from Pi's settings files: the agent dir's `settings.json`, then the
 * project's `.pi/settings.json` (only for trusted projects). Reads only; never writes the
 * user's files. File access is injected so this stays testable.
 */
import { mergeSettings, parseKeeperSection, type PartialSettings, type SettingsDiagnostic } from "./parse.ts";
import type { KeeperSettings } from "./schema.ts";

export interface SettingsFileReader {
  /** Returns the file's text, or undefined when it does not exist. */
  (path: string): string | undefined;
}

export interface LoadedSettings {
  settings: KeeperSettings;
  diagnostics: SettingsDiagnostic[];
  /** Files that were read, in the order they were applied. */
  sources: string[];
  /** What each file set validly, in the order applied (later wins): where a value came from. */
  layers: Array<{ source: string; partial: PartialSettings }>;
  /** Settings files that exist but were not read (the project's, when Pi does not trust the project). */
  ignored?: IgnoredSettingsFile[];
}

export interface IgnoredSettingsFile {
  source: string;
  /** Why, in words ("project not trusted"). */
  reason: string;
  /** The file has a `contextKeeper` section (so ignoring it changes this extension's settings). */
  setsKeeper: boolean;
}

export const SETTINGS_KEY = "contextKeeper";

function readLayer(path: string, read: SettingsFileReader, diagnostics: SettingsDiagnostic[]): PartialSettings | undefined {
  const text = read(path);
  if (text === undefined) return undefined;
  if (text.trim() === "") return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    diagnostics.push({ key: "(file)", value: "(unparsable JSON)", message: `${reason}; contextKeeper settings from this file are ignored (the file is left as it is)`, source: path });
    return undefined;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    diagnostics.push({ key: "(file)", value: JSON.stringify(json)?.slice(0, 40) ?? "?", message: "settings file is not a JSON object; ignored", source: path });
    return undefined;
  }
  const parsed = parseKeeperSection((json as Record<string, unknown>)[SETTINGS_KEY], path);
  diagnostics.push(...parsed.diagnostics);
  return parsed.partial;
}

/** Whether the file's JSON has a `contextKeeper` key (unparsable: false; it is not read anyway). */
function hasKeeperSection(text: string): boolean {
  try {
    const json: unknown = JSON.parse(text);
    return typeof json === "object" && json !== null && !Array.isArray(json) && SETTINGS_KEY in json;
  } catch {
    return false;
  }
}

export function loadKeeperSettings(options: { files: string[]; read: SettingsFileReader; skipped?: ReadonlyArray<{ path: string; reason: string }> }): LoadedSettings {
  const diagnostics: SettingsDiagnostic[] = [];
  const layers: PartialSettings[] = [];
  const sources: string[] = [];
  for (const file of options.files) {
    const layer = readLayer(file, options.read, diagnostics);
    if (layer !== undefined) {
      layers.push(layer);
      sources.push(file);
    }
  }
  const ignored: IgnoredSettingsFile[] = [];
  for (const skip of options.skipped ?? []) {
    const text = options.read(skip.path);
    if (text !== undefined) ignored.push({ source: skip.path, reason: skip.reason, setsKeeper: hasKeeperSection(text) });
  }
  return {
    settings: mergeSettings(...layers),
    diagnostics,
    sources,
    layers: layers.map((partial, i) => ({ source: sources[i]!, partial })),
    ...(ignored.length ? { ignored } : {}),
  };
}
