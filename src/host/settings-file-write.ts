/**
 * Edge: `/keeper save` — merge the session overrides into one settings file (the agent's
 * `settings.json` or the project's `.pi/settings.json`), written whole through a temporary
 * file and a rename so a crash never leaves half a file. Other keys are kept.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { PartialSettings } from "../settings/parse.ts";
import { settingsTextWithOverrides } from "../settings/save.ts";

export type SaveResult = { ok: true; written: string[] } | { ok: false; message: string };

export function saveOverridesToFile(path: string, overrides: PartialSettings): SaveResult {
  let existing: string | undefined;
  try {
    existing = existsSync(path) ? readFileSync(path, "utf8") : undefined;
  } catch (error) {
    return { ok: false, message: `could not read ${path} (${error instanceof Error ? error.message : String(error)}); nothing written` };
  }
  const next = settingsTextWithOverrides(existing, overrides);
  if (!next.ok) return next;
  try {
    mkdirSync(dirname(path), { recursive: true });
    const temporary = `${path}.keeper-${process.pid}.tmp`;
    writeFileSync(temporary, next.text);
    renameSync(temporary, path);
    return { ok: true, written: next.written };
  } catch (error) {
    return { ok: false, message: `could not write ${path}: ${error instanceof Error ? error.message : String(error)}` };
  }
}
