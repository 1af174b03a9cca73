/**
 * Edge: where the settings files live and how they are read. Uses Pi's config helpers so a
 * rebranded Pi (other agent dir / config dir name) is followed.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_DIR_NAME, getAgentDir } from "@earendil-works/pi-coding-agent";
import { loadKeeperSettings, type LoadedSettings } from "../settings/load.ts";

export function readTextIfExists(path: string): string | undefined {
  try {
    return existsSync(path) ? readFileSync(path, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

/** The project's settings file, as Pi's settings manager names it (`<cwd>/.pi/settings.json`). */
export function projectSettingsFile(cwd: string): string {
  return join(cwd, CONFIG_DIR_NAME, "settings.json");
}

export function settingsFiles(options: { cwd: string; projectTrusted: boolean }): string[] {
  const files = [join(getAgentDir(), "settings.json")];
  if (options.projectTrusted) files.push(projectSettingsFile(options.cwd));
  return files;
}

/** The files Pi reads, in order; an untrusted project's file is not read, only noted when it exists. */
export function loadSettingsFromDisk(options: { cwd: string; projectTrusted: boolean }): LoadedSettings {
  const skipped = options.projectTrusted ? [] : [{ path: projectSettingsFile(options.cwd), reason: "project not trusted" }];
  return loadKeeperSettings({ files: settingsFiles(options), read: readTextIfExists, skipped });
}
