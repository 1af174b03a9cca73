/**
 * Edge: another async compaction beside the keeper — pi-async-compaction, which the keeper
 * replaces (a migrating user may still have it), or any extension with its `/async-compact-now`.
 * Both would make a background summary for every compaction (one thrown away), and Pi names the
 * two commands `async-compact-now:1` / `:2`, so a typed `/async-compact-now` matched neither and
 * went to the model as a prompt. The keeper finds the other command among Pi's commands at
 * session start; then its own async compaction stands down (`hooks.ts`: `isActive` is false), so
 * each compaction has one summary job, the other's; and `/async-compact-now`, typed or picked
 * as the keeper's renamed command, runs the other's command.
 */
import type { ExtensionAPI, InputEvent, InputEventResult, SlashCommandInfo } from "@earendil-works/pi-coding-agent";
import { realpathSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { COMPACT_NOW_DESCRIPTION, DEFAULT_COMMAND_NAME } from "./compaction-command.ts";

/** The other extension's command: the name Pi invokes it by, and where it comes from. */
export interface OtherCompaction {
  invocationName: string;
  path: string;
}

const real = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/** Whether Pi's command `c` is this copy's (its extension file is the package's `index.ts`; an inline extension: by its description). */
function isOurs(c: SlashCommandInfo, ownRoot: string): boolean {
  const path = c.sourceInfo?.path ?? "";
  if (!isAbsolute(path)) return c.description === COMPACT_NOW_DESCRIPTION;
  return real(path) === real(join(ownRoot, "index.ts"));
}

/** Another extension's `/async-compact-now` (as Pi names it, `:n` when both register it) among `commands`. */
export function findOtherCompaction(commands: readonly SlashCommandInfo[], ownRoot: string): OtherCompaction | undefined {
  const base = new RegExp(`^${DEFAULT_COMMAND_NAME}(:\\d+)?$`);
  const other = commands.find((c) => c.source === "extension" && base.test(c.name) && !isOurs(c, ownRoot));
  return other ? { invocationName: other.name, path: other.sourceInfo?.path ?? "" } : undefined;
}

/** Read Pi's commands now (a `pi` that cannot list them: none found). */
export function otherCompactionIn(pi: Pick<ExtensionAPI, "getCommands">, ownRoot: string): OtherCompaction | undefined {
  let commands: SlashCommandInfo[];
  try {
    commands = pi.getCommands();
  } catch {
    return undefined;
  }
  return Array.isArray(commands) ? findOtherCompaction(commands, ownRoot) : undefined;
}

/** Run the other extension's command, with the arguments typed. */
export function runOtherCompactNow(pi: Pick<ExtensionAPI, "sendUserMessage">, other: OtherCompaction, args: string): void {
  pi.sendUserMessage(`/${other.invocationName}${args ? ` ${args}` : ""}`, { expandPromptTemplates: true });
}

/**
 * The `input` step: a typed `/async-compact-now` that matched no command (Pi renamed both) runs
 * the other's command instead of going to the model. Input an extension sent is left alone.
 */
export function routeCompactNow(pi: Pick<ExtensionAPI, "sendUserMessage">, other: OtherCompaction | undefined, event: InputEvent): InputEventResult | undefined {
  if (!other || event.source === "extension") return undefined;
  const typed = new RegExp(`^\\/${DEFAULT_COMMAND_NAME}(?:\\s+([\\s\\S]*))?$`).exec(event.text.trim());
  if (!typed) return undefined;
  runOtherCompactNow(pi, other, (typed[1] ?? "").trim());
  return { action: "handled" };
}
