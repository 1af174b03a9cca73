/** Pure text for the `/keeper` command. */
import type { KeeperSettings } from "../settings/schema.ts";
import { formatDiagnostic, type SettingsDiagnostic } from "../settings/parse.ts";

export interface KeeperStatusSection {
  title: string;
  lines: string[];
}

export interface KeeperViewInput {
  settings: KeeperSettings;
  sources: string[];
  diagnostics: SettingsDiagnostic[];
  /** Extra sections contributed by features (pruning stats, thinking policy, compaction job...). */
  sections: KeeperStatusSection[];
}

function flatten(value: unknown, prefix: string, out: string[]): void {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? `${prefix}.${key}` : key, out);
    return;
  }
  out.push(`  ${prefix} = ${JSON.stringify(value)}`);
}

export function formatKeeperView(input: KeeperViewInput): string {
  const lines: string[] = [];
  lines.push(`context-keeper: ${input.settings.enabled ? "enabled" : "disabled (contextKeeper.enabled = false): nothing is changed on the wire"}`);
  lines.push(`settings from: ${input.sources.length ? input.sources.join(", ") : "defaults only"}`);
  if (input.diagnostics.length) {
    lines.push("settings problems (defaults used for these keys):");
    for (const d of input.diagnostics) lines.push(`  ${formatDiagnostic(d)}`);
  }
  lines.push("effective settings:");
  flatten(input.settings, "", lines);
  for (const section of input.sections) {
    lines.push(`${section.title}:`);
    for (const line of section.lines) lines.push(`  ${line}`);
  }
  return lines.join("\n");
}
