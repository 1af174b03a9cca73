/**
 * `/keeper` arguments → one action. Pure: the text the user typed in, a typed action out
 * (values already validated against the settings schema), or an error sentence that says
 * what was wrong and what would work.
 */
import { didYouMean, findSettingKey } from "../settings/keys.ts";
import { parseSettingValue, unknownKeyMessage } from "../settings/overrides.ts";

export type SaveTarget = "agent" | "project";

export type KeeperAction =
  | { kind: "show" }
  | { kind: "help" }
  | { kind: "stats" }
  | { kind: "now" }
  | { kind: "why"; detail: boolean }
  | { kind: "cache"; detail: boolean }
  | { kind: "on" }
  | { kind: "off" }
  | { kind: "set"; key: string; value: unknown }
  | { kind: "reset"; key?: string }
  | { kind: "save"; target?: SaveTarget }
  | { kind: "error"; message: string };

export interface SubcommandInfo {
  name: string;
  args?: string;
  description: string;
}

/** Every subcommand, in the order help and completions list them. */
export const SUBCOMMANDS: readonly SubcommandInfo[] = [
  { name: "stats", description: "what pruning did: flushes, tokens saved, summarizer spend" },
  { name: "now", description: "flush now instead of at the end of the request" },
  { name: "why", args: "[--detail]", description: "why the last flushes changed history or waited; --detail: the arithmetic" },
  { name: "cache", args: "[--detail]", description: "how often the prompt cache was written again, and why; --detail: each rewrite" },
  { name: "on", description: "turn the extension on for this session" },
  { name: "off", description: "turn the extension off for this session (history is sent unchanged)" },
  { name: "set", args: "<key> <value>", description: "change one setting for this session" },
  { name: "reset", args: "[key]", description: "drop one session override, or all of them" },
  { name: "save", args: "[agent|project]", description: "write the session overrides to a settings file" },
  { name: "help", description: "list the subcommands" },
];

const SAVE_TARGETS: readonly SaveTarget[] = ["agent", "project"];

const usage = (name: string): string => {
  const sub = SUBCOMMANDS.find((s) => s.name === name);
  return `/keeper ${name}${sub?.args ? ` ${sub.args}` : ""}`;
};

function parseSet(rest: string): KeeperAction {
  const trimmed = rest.trim();
  if (trimmed === "") return { kind: "error", message: `usage: ${usage("set")} (Tab completes keys and values)` };
  const eq = trimmed.match(/^([^\s=]+)\s*=\s*(.*)$/s);
  const [key, valueText] = eq ? [eq[1]!, eq[2]!] : [trimmed.split(/\s+/)[0]!, trimmed.slice(trimmed.split(/\s+/)[0]!.length)];
  if (!findSettingKey(key)) return { kind: "error", message: unknownKeyMessage(key) };
  if (valueText.trim() === "") return { kind: "error", message: `usage: /keeper set ${key} <value> (a value is missing; ${key} is unchanged)` };
  const parsed = parseSettingValue(key, valueText);
  return parsed.ok ? { kind: "set", key, value: parsed.value } : { kind: "error", message: `${parsed.message} ${key} is unchanged.` };
}

export function parseKeeperCommand(args: string): KeeperAction {
  const trimmed = args.trim();
  if (trimmed === "") return { kind: "show" };
  const name = trimmed.split(/\s+/)[0]!;
  const rest = trimmed.slice(name.length);
  const sub = name.toLowerCase();
  switch (sub) {
    case "set":
      return parseSet(rest);
    case "reset": {
      const key = rest.trim();
      if (key === "" || key === "all") return { kind: "reset" };
      return findSettingKey(key) ? { kind: "reset", key } : { kind: "error", message: unknownKeyMessage(key) };
    }
    case "save": {
      const target = rest.trim().toLowerCase();
      if (target === "") return { kind: "save" };
      if ((SAVE_TARGETS as readonly string[]).includes(target)) return { kind: "save", target: target as SaveTarget };
      return { kind: "error", message: `usage: ${usage("save")} ("${target}" is not a settings file).${didYouMean(target, SAVE_TARGETS)}` };
    }
    case "why":
    case "cache": {
      const option = rest.trim().toLowerCase();
      if (option === "") return { kind: sub, detail: false };
      if (option === "--detail" || option === "detail") return { kind: sub, detail: true };
      return { kind: "error", message: `/keeper ${sub} takes only --detail (got "${rest.trim()}")` };
    }
    case "stats":
    case "now":
    case "on":
    case "off":
    case "help":
      if (rest.trim() !== "") return { kind: "error", message: `/keeper ${sub} takes no arguments (got "${rest.trim()}")` };
      return { kind: sub };
    default:
      return {
        kind: "error",
        message: `unknown subcommand "${name}".${didYouMean(name, SUBCOMMANDS.map((s) => s.name))} ${helpLine()}`.replace("  ", " "),
      };
  }
}

/** One line naming every subcommand. */
export function helpLine(): string {
  return `Subcommands: ${SUBCOMMANDS.map((s) => s.name).join(", ")} (/keeper help explains them).`;
}

export function helpText(): string {
  const width = Math.max(...SUBCOMMANDS.map((s) => usage(s.name).length));
  return [
    "context-keeper commands:",
    `  ${"/keeper".padEnd(width)}  settings in effect (changed ones marked) and status`,
    ...SUBCOMMANDS.map((s) => `  ${usage(s.name).padEnd(width)}  ${s.description}`),
  ].join("\n");
}
