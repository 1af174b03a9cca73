/**
 * The settings keys as a flat list derived from the zod schema: dotted path, kind, default and
 * (for enums) the allowed values. Used by `/keeper set`, its completions and "did you mean".
 */
import { z } from "zod";
import { keeperSettingsSchema } from "./schema.ts";

export type SettingKind = "boolean" | "number" | "integer" | "enum" | "string" | "string-list";

export interface SettingKey {
  /** Dotted path under `contextKeeper`, e.g. `thinkingStrip.mode`. */
  path: string;
  kind: SettingKind;
  defaultValue: unknown;
  /** Allowed values of an enum key. */
  values?: readonly string[];
  /** The leaf's schema without its default: validates a value the user typed. */
  schema: z.ZodType;
}

type AnySchema = z.ZodType;

const unwrap = (schema: AnySchema): AnySchema => (schema instanceof z.ZodDefault ? (schema.unwrap() as AnySchema) : schema);

function kindOf(schema: AnySchema): { kind: SettingKind; values?: readonly string[] } {
  if (schema instanceof z.ZodBoolean) return { kind: "boolean" };
  if (schema instanceof z.ZodEnum) return { kind: "enum", values: schema.options.map(String) };
  if (schema instanceof z.ZodNumber) return { kind: schema.isInt ? "integer" : "number" };
  if (schema instanceof z.ZodArray) return { kind: "string-list" };
  return { kind: "string" };
}

function collect(group: z.ZodObject, prefix: string, out: SettingKey[]): void {
  for (const [name, field] of Object.entries(group.shape) as [string, AnySchema][]) {
    const path = prefix ? `${prefix}.${name}` : name;
    const inner = unwrap(field);
    if (inner instanceof z.ZodObject) {
      collect(inner, path, out);
      continue;
    }
    out.push({ path, ...kindOf(inner), defaultValue: field.parse(undefined), schema: inner });
  }
}

function buildKeys(): SettingKey[] {
  const out: SettingKey[] = [];
  collect(keeperSettingsSchema, "", out);
  return out;
}

/** Every leaf key of the schema, in schema order. */
export const SETTING_KEYS: readonly SettingKey[] = buildKeys();

export function findSettingKey(path: string): SettingKey | undefined {
  return SETTING_KEYS.find((k) => k.path === path);
}

/** The value at a dotted path of a settings tree (undefined when absent). */
export function valueAt(tree: unknown, path: string): unknown {
  let current: unknown = tree;
  for (const part of path.split(".")) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Levenshtein distance, case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost));
    }
    previous = row;
  }
  return previous[t.length]!;
}

/**
 * The candidates closest to `input` (up to `limit`), all at the best score: a whole-path
 * edit distance counts as is, a match on the last path segment only (`keepLastTurns` →
 * `thinkingStrip.keepLastTurns`) half a point more, so `enabeld` suggests `enabled` rather
 * than every `*.enabled`. Nothing beyond a third of the input's length (at least 2).
 */
export function closestMatches(input: string, candidates: readonly string[], limit = 3): string[] {
  const needle = input.trim();
  if (needle === "") return [];
  const scored = candidates.map((candidate) => {
    const last = candidate.slice(candidate.lastIndexOf(".") + 1);
    const distance = Math.min(editDistance(needle, candidate), last === candidate ? Infinity : editDistance(needle, last) + 0.5);
    return { candidate, score: distance };
  });
  const tolerance = Math.max(2, Math.floor(needle.length / 3)) + 0.5;
  const close = scored.filter((s) => s.score <= tolerance);
  const best = Math.min(...close.map((s) => s.score));
  return close
    .filter((s) => s.score === best)
    .sort((a, b) => a.candidate.localeCompare(b.candidate))
    .slice(0, limit)
    .map((s) => s.candidate);
}

/** " Did you mean a or b?" or "". */
export function didYouMean(input: string, candidates: readonly string[]): string {
  const close = closestMatches(input, candidates);
  if (close.length === 0) return "";
  const quoted = close.map((c) => `"${c}"`);
  return ` Did you mean ${quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`}?`;
}
