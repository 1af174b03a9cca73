/**
 * Session overrides: settings changed from inside Pi (`/keeper set|on|off|reset`). A value the
 * user types is read by the key's kind and validated by the key's own schema leaf, the same
 * one the settings files go through. Overrides are a partial settings tree laid over the
 * settings loaded from the files; nothing here touches a file.
 */
import { SETTING_KEYS, didYouMean, findSettingKey, valueAt, type SettingKey } from "./keys.ts";
import { mergeSettings, type PartialSettings } from "./parse.ts";
import type { KeeperSettings } from "./schema.ts";

export type ValueParse = { ok: true; value: unknown } | { ok: false; message: string };

const TRUE_WORDS = new Set(["true", "on", "yes", "1"]);
const FALSE_WORDS = new Set(["false", "off", "no", "0"]);

function unquote(text: string): string {
  const t = text.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) return t.slice(1, -1);
  return t;
}

/** What a key takes, in words: "on or off", "one of auto, off, flush-gated", "a whole number ≥ 1". */
export function acceptedValues(key: SettingKey): string {
  switch (key.kind) {
    case "boolean":
      return "on or off (true/false)";
    case "enum":
      return `one of ${(key.values ?? []).join(", ")}`;
    case "string-list":
      return "names separated by commas, or a JSON list of strings";
    case "string":
      return key.path === "summarizer.model" ? 'provider/model-id, or "" for the session model' : "text";
    case "number":
    case "integer": {
      const ok = (n: number) => key.schema.safeParse(n).success;
      const bounds = key.schema as unknown as { minValue?: number | null; maxValue?: number | null };
      const lo = bounds.minValue ?? -Infinity;
      const hi = bounds.maxValue ?? Infinity;
      const parts: string[] = [];
      if (Number.isFinite(lo)) parts.push(key.kind === "integer" && !ok(lo) ? `≥ ${lo + 1}` : `${ok(lo) ? "≥" : ">"} ${lo}`);
      if (Number.isFinite(hi) && hi < Number.MAX_SAFE_INTEGER) parts.push(`${ok(hi) ? "≤" : "<"} ${hi}`);
      return `${key.kind === "integer" ? "a whole number" : "a number"}${parts.length ? ` ${parts.join(" and ")}` : ""}`;
    }
  }
}

function readTyped(key: SettingKey, text: string): ValueParse {
  const raw = text.trim();
  const refused: ValueParse = { ok: false, message: badValueText(key, raw) };
  switch (key.kind) {
    case "boolean": {
      const word = raw.toLowerCase();
      if (TRUE_WORDS.has(word)) return { ok: true, value: true };
      if (FALSE_WORDS.has(word)) return { ok: true, value: false };
      return refused;
    }
    case "number":
    case "integer": {
      const n = Number(raw.replace(/_/g, ""));
      if (raw === "" || !Number.isFinite(n)) return refused;
      return { ok: true, value: n };
    }
    case "string-list": {
      if (raw.startsWith("[")) {
        try {
          return { ok: true, value: JSON.parse(raw) };
        } catch {
          return refused;
        }
      }
      return { ok: true, value: raw === "" || raw === "-" ? [] : raw.split(",").map((s) => s.trim()).filter((s) => s !== "") };
    }
    case "enum":
    case "string":
      return { ok: true, value: unquote(raw) };
  }
}

/** `"sometimes" is not a valid thinkingStrip.mode — it takes one of auto, off, flush-gated.` — the value as typed, and "did you mean" for an enum. */
function badValueText(key: SettingKey, raw: string): string {
  return `"${raw}" is not a valid ${key.path} — it takes ${acceptedValues(key)}.${key.values ? didYouMean(unquote(raw), key.values) : ""}`;
}

/** Read and validate a value typed for a key. The message echoes the value, names the key and says what it takes. */
export function parseSettingValue(path: string, text: string): ValueParse {
  const key = findSettingKey(path);
  if (!key) return { ok: false, message: unknownKeyMessage(path) };
  const typed = readTyped(key, text);
  if (!typed.ok) return typed;
  const checked = key.schema.safeParse(typed.value);
  if (checked.success) return { ok: true, value: checked.data };
  return { ok: false, message: badValueText(key, text.trim()) };
}

export function unknownKeyMessage(path: string): string {
  return `unknown setting "${path}".${didYouMean(path, SETTING_KEYS.map((k) => k.path))}`;
}

function setAt(tree: PartialSettings, parts: readonly string[], value: unknown): PartialSettings {
  const [head, ...rest] = parts;
  if (head === undefined) return tree;
  if (rest.length === 0) return { ...tree, [head]: value };
  const inner = tree[head];
  const child = typeof inner === "object" && inner !== null && !Array.isArray(inner) ? (inner as PartialSettings) : {};
  return { ...tree, [head]: setAt(child, rest, value) };
}

function deleteAt(tree: PartialSettings, parts: readonly string[]): PartialSettings {
  const [head, ...rest] = parts;
  if (head === undefined || !(head in tree)) return tree;
  const out: PartialSettings = { ...tree };
  if (rest.length === 0) delete out[head];
  else {
    const inner = deleteAt(out[head] as PartialSettings, rest);
    if (Object.keys(inner).length === 0) delete out[head];
    else out[head] = inner;
  }
  return out;
}

/** Overrides with `path` set to an already validated value. */
export function withOverride(overrides: PartialSettings, path: string, value: unknown): PartialSettings {
  return setAt(overrides, path.split("."), value);
}

/** Overrides without `path`; without a path, no overrides at all. */
export function withoutOverride(overrides: PartialSettings, path?: string): PartialSettings {
  return path === undefined ? {} : deleteAt(overrides, path.split("."));
}

/** The overridden leaves as `[path, value]`, in schema order. */
export function overrideLeaves(overrides: PartialSettings): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const key of SETTING_KEYS) {
    const value = valueAt(overrides, key.path);
    if (value !== undefined) out.push([key.path, value]);
  }
  return out;
}

/** Settings from the files with the session overrides laid over them. */
export function applyOverrides(fromFiles: KeeperSettings, overrides: PartialSettings): KeeperSettings {
  return mergeSettings(fromFiles as unknown as PartialSettings, overrides);
}
