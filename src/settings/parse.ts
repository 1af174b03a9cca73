/**
 * Key-by-key parsing of a raw `contextKeeper` object against the schema.
 *
 * A bad value (wrong type, unknown enum value, out of range) produces one diagnostic naming
 * the key and the value and falls back to the default for that key only; valid siblings are
 * kept. Unknown keys are reported (likely typos) and ignored.
 */
import { z } from "zod";
import { didYouMean, SETTING_KEYS } from "./keys.ts";
import { keeperSettingsSchema, type KeeperSettings } from "./schema.ts";

/** `pruning`, `pruning.errorPurge`, …: the groups, so a misspelt group gets a suggestion too. */
function groupPaths(paths: readonly string[]): string[] {
  const groups = new Set<string>();
  for (const p of paths) for (let i = p.indexOf("."); i > 0; i = p.indexOf(".", i + 1)) groups.add(p.slice(0, i));
  return [...groups];
}

export interface SettingsDiagnostic {
  /** Dotted path under `contextKeeper`, e.g. `thinkingStrip.mode`; `""`: the `contextKeeper` value itself. */
  key: string;
  /** The offending value, as the user wrote it (JSON). */
  value: string;
  message: string;
  /** Which file it came from. */
  source: string;
}

/** A partial settings tree holding only the keys a file set validly. */
export type PartialSettings = { [key: string]: unknown };

type AnySchema = z.ZodType;

function unwrapDefault(schema: AnySchema): AnySchema {
  return schema instanceof z.ZodDefault ? (schema.unwrap() as AnySchema) : schema;
}

function isGroup(schema: AnySchema): schema is z.ZodObject {
  return unwrapDefault(schema) instanceof z.ZodObject;
}

function showValue(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Defaults for a whole group, derived from its leaves. */
export function defaultsOf(group: z.ZodObject = keeperSettingsSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(group.shape) as [string, AnySchema][]) {
    out[key] = isGroup(field) ? defaultsOf(unwrapDefault(field) as z.ZodObject) : field.parse(undefined);
  }
  return out;
}

export const DEFAULT_SETTINGS = defaultsOf() as KeeperSettings;

function parseGroup(options: {
  group: z.ZodObject;
  raw: Record<string, unknown>;
  path: string;
  source: string;
  diagnostics: SettingsDiagnostic[];
}): PartialSettings {
  const { group, raw, path, source, diagnostics } = options;
  const out: PartialSettings = {};
  const shape = group.shape as Record<string, AnySchema>;
  for (const [key, value] of Object.entries(raw)) {
    const keyPath = path ? `${path}.${key}` : key;
    const field = shape[key];
    if (!field) {
      const paths = SETTING_KEYS.map((k) => k.path);
      diagnostics.push({ key: keyPath, value: showValue(value), message: `unknown setting, ignored.${didYouMean(keyPath, [...paths, ...groupPaths(paths)])}`, source });
      continue;
    }
    if (isGroup(field)) {
      if (!isPlainObject(value)) {
        diagnostics.push({ key: keyPath, value: showValue(value), message: "expected an object; using the defaults for this group", source });
        continue;
      }
      out[key] = parseGroup({ group: unwrapDefault(field) as z.ZodObject, raw: value, path: keyPath, source, diagnostics });
      continue;
    }
    const result = unwrapDefault(field).safeParse(value);
    if (result.success) out[key] = result.data;
    else {
      const reason = result.error.issues[0]?.message ?? "invalid value";
      diagnostics.push({ key: keyPath, value: showValue(value), message: `${reason}; using the default ${showValue(field.parse(undefined))}`, source });
    }
  }
  return out;
}

/** Validate one file's `contextKeeper` value. Never throws. */
export function parseKeeperSection(raw: unknown, source: string): { partial: PartialSettings; diagnostics: SettingsDiagnostic[] } {
  const diagnostics: SettingsDiagnostic[] = [];
  if (raw === undefined) return { partial: {}, diagnostics };
  if (!isPlainObject(raw)) {
    diagnostics.push({ key: "", value: showValue(raw), message: "expected an object of settings (e.g. { \"enabled\": true }); using the defaults", source });
    return { partial: {}, diagnostics };
  }
  return { partial: parseGroup({ group: keeperSettingsSchema, raw, path: "", source, diagnostics }), diagnostics };
}

/** Later layers override earlier ones key by key; arrays and leaves are replaced whole. */
export function mergeSettings(...layers: PartialSettings[]): KeeperSettings {
  const merge = (base: Record<string, unknown>, over: PartialSettings): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(over)) {
      out[key] = isPlainObject(value) && isPlainObject(base[key]) ? merge(base[key] as Record<string, unknown>, value) : value;
    }
    return out;
  };
  let current = defaultsOf();
  for (const layer of layers) current = merge(current, layer);
  return current as KeeperSettings;
}

export function formatDiagnostic(d: SettingsDiagnostic): string {
  if (d.key === "(file)") return `context-keeper: ${d.source}: ${d.value}: ${d.message}`;
  const key = d.key === "" ? "contextKeeper" : `contextKeeper.${d.key}`;
  return `context-keeper: ${d.source}: ${key} = ${d.value}: ${d.message}`;
}
