/**
 * What changed in the settings files since a session read them: the keys whose value the files
 * give now differs from the one they gave then, and the problems (bad values) they have now
 * that they did not have then. `/keeper save` reads the files again to write them, and reports
 * these instead of applying them: the files are read at session start.
 */
import { SETTING_KEYS, valueAt } from "./keys.ts";
import type { SettingsDiagnostic } from "./parse.ts";
import type { KeeperSettings } from "./schema.ts";

export interface SettingsFileChange {
  key: string;
  /** What the files give now. */
  files: unknown;
  /** What this session runs with (the files as it read them, with its overrides). */
  session: unknown;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Keys the files give a different value now than when the session read them, `except` left out (the keys a save just wrote). */
export function changedSince(options: { then: KeeperSettings; now: KeeperSettings; session: KeeperSettings; except?: ReadonlySet<string> }): SettingsFileChange[] {
  const out: SettingsFileChange[] = [];
  for (const { path } of SETTING_KEYS) {
    if (options.except?.has(path)) continue;
    const now = valueAt(options.now, path);
    if (same(valueAt(options.then, path), now)) continue;
    out.push({ key: path, files: now, session: valueAt(options.session, path) });
  }
  return out;
}

/** Problems of the files now that they did not have when the session read them. */
export function newProblems(then: readonly SettingsDiagnostic[], now: readonly SettingsDiagnostic[]): SettingsDiagnostic[] {
  const seen = new Set(then.map((d) => JSON.stringify(d)));
  return now.filter((d) => !seen.has(JSON.stringify(d)));
}
