/**
 * Argument completions for `/keeper`. Pi hands over everything typed after "/keeper " and
 * replaces all of it with the chosen item's `value`, so every value is the whole argument
 * text ("set thinkingStrip.mode off"), and `label` is the part being completed.
 */
import { SETTING_KEYS, findSettingKey, valueAt, type SettingKey } from "../settings/keys.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { SUBCOMMANDS } from "./keeper-command.ts";

/** Shape of pi-tui's `AutocompleteItem`. */
export interface CompletionItem {
  value: string;
  label: string;
  description?: string;
}

export interface CompletionContext {
  /** Settings in effect, for "now: …" hints. */
  settings?: KeeperSettings;
  /** Keys with a session override, offered first by `reset`. */
  overridden?: readonly string[];
  /** `provider/model-id` of the models Pi can use, offered for `summarizer.model`. */
  models?: readonly string[];
}

const show = (v: unknown): string => (typeof v === "string" ? (v === "" ? '""' : v) : Array.isArray(v) ? (v.length ? v.join(",") : "[]") : String(v));

function matches(candidate: string, typed: string): boolean {
  const c = candidate.toLowerCase();
  const t = typed.toLowerCase();
  return c.startsWith(t) || c.split(".").some((part) => part.startsWith(t));
}

function keyDescription(key: SettingKey, context: CompletionContext): string {
  const now = context.settings === undefined ? undefined : valueAt(context.settings, key.path);
  const kind = key.values ? key.values.join("|") : key.kind === "string-list" ? "comma list" : key.kind === "boolean" ? "on|off" : key.kind;
  const parts = [kind];
  if (now !== undefined) parts.push(`now ${show(now)}`);
  parts.push(`default ${show(key.defaultValue)}`);
  return parts.join(" · ");
}

function valueCandidates(key: SettingKey, context: CompletionContext): string[] {
  if (key.kind === "boolean") return ["on", "off"];
  if (key.path === "summarizer.model" && context.models?.length) return ['""', ...context.models];
  if (key.values) return [...key.values];
  const now = context.settings === undefined ? undefined : valueAt(context.settings, key.path);
  const out = [show(key.defaultValue)];
  if (now !== undefined && show(now) !== out[0]) out.unshift(show(now));
  return out;
}

function completeKeys(verb: "set" | "reset", typed: string, context: CompletionContext): CompletionItem[] {
  const overridden = new Set(context.overridden ?? []);
  const keys = verb === "reset" && overridden.size > 0 ? SETTING_KEYS.filter((k) => overridden.has(k.path)) : SETTING_KEYS;
  return keys
    .filter((k) => matches(k.path, typed))
    .map((k) => ({
      value: verb === "set" ? `set ${k.path} ` : `reset ${k.path}`,
      label: k.path,
      description: (overridden.has(k.path) ? "overridden · " : "") + keyDescription(k, context),
    }));
}

function completeValue(key: SettingKey, typed: string, context: CompletionContext): CompletionItem[] {
  return valueCandidates(key, context)
    .filter((v) => v.toLowerCase().startsWith(typed.toLowerCase()) || (key.path === "summarizer.model" && typed !== "" && v.toLowerCase().includes(typed.toLowerCase())))
    .map((v) => ({ value: `set ${key.path} ${v}`, label: v, ...(v === show(key.defaultValue) ? { description: key.path === "summarizer.model" ? "default: the session model" : "default" } : {}) }));
}

/** Items for the text typed after "/keeper ", or null when there is nothing to offer. */
export function keeperCompletions(argumentText: string, context: CompletionContext = {}): CompletionItem[] | null {
  const text = argumentText.replace(/^\s+/, "");
  const firstSpace = text.search(/\s/);
  let items: CompletionItem[] = [];
  if (firstSpace === -1) {
    items = SUBCOMMANDS.filter((s) => s.name.startsWith(text.toLowerCase())).map((s) => ({
      value: s.args ? `${s.name} ` : s.name,
      label: s.name,
      description: s.args ? `${s.args} — ${s.description}` : s.description,
    }));
  } else {
    const verb = text.slice(0, firstSpace).toLowerCase();
    const rest = text.slice(firstSpace).replace(/^\s+/, "");
    if (verb === "set") {
      const keyEnd = rest.search(/[\s=]/);
      if (keyEnd === -1) items = completeKeys("set", rest, context);
      else {
        const key = findSettingKey(rest.slice(0, keyEnd));
        if (key) items = completeValue(key, rest.slice(keyEnd).replace(/^[\s=]+/, ""), context);
      }
    } else if (verb === "reset" && !/\s/.test(rest)) items = completeKeys("reset", rest, context);
    else if ((verb === "why" || verb === "cache") && "--detail".startsWith(rest.toLowerCase())) {
      items = [{ value: `${verb} --detail`, label: "--detail", description: verb === "why" ? "the arithmetic of each decision" : "each rewrite with its cause and cost; the last request's parts" }];
    }
    else if (verb === "save" && !/\s/.test(rest)) {
      items = [
        { value: "save agent", label: "agent", description: "your Pi settings (all projects)" },
        { value: "save project", label: "project", description: "this project's .pi/settings.json (trusted projects only)" },
      ].filter((i) => i.label.startsWith(rest.toLowerCase()));
    }
  }
  return items.length > 0 ? items : null;
}
