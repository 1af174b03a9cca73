/**
 * Pure text for `/keeper save` when the settings files changed since the session read them:
 * what changed (the files' value and the one this session runs with), the bad values that came
 * with the change, and when it takes effect.
 */
import { formatDiagnostic, type SettingsDiagnostic } from "../settings/parse.ts";
import type { SettingsFileChange } from "../settings/file-changes.ts";

const show = (v: unknown): string => JSON.stringify(v);

export function filesChangedText(changes: readonly SettingsFileChange[], problems: readonly SettingsDiagnostic[]): string[] {
  if (changes.length === 0 && problems.length === 0) return [];
  const lines = ["The settings files changed since this session read them at its start; this session keeps what it read (and your overrides), the files' new values take effect at the next start or /reload:"];
  for (const c of changes) lines.push(`  ${c.key} = ${show(c.files)} in the files (this session: ${show(c.session)})`);
  const off = changes.find((c) => c.key === "enabled" && c.files === false && c.session === true);
  if (off) lines.push("  (with enabled = false the keeper will be off from the next start; /keeper off turns it off now)");
  if (problems.length > 0) lines.push("Problems in the files now (the defaults will be used for these keys):", ...problems.map((d) => `  ${formatDiagnostic(d)}`));
  lines.push("The keys just saved stay marked as session overrides until then (the file holds them).");
  return lines;
}
