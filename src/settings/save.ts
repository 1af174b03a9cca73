/**
 * `/keeper save`: the session overrides merged into a settings file's text. Pure: the old text
 * in, the new text (or why it cannot be written) out. Every other key of the file is kept as
 * it was, in its order; only `contextKeeper` gains or changes the overridden leaves.
 */
import { SETTINGS_KEY } from "./load.ts";
import { overrideLeaves } from "./overrides.ts";
import type { PartialSettings } from "./parse.ts";

export type SaveText = { ok: true; text: string; written: string[] } | { ok: false; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function setLeaf(root: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let node = root;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

/** `existing` is the file's text, or undefined when the file does not exist yet. */
export function settingsTextWithOverrides(existing: string | undefined, overrides: PartialSettings): SaveText {
  const leaves = overrideLeaves(overrides);
  if (leaves.length === 0) return { ok: false, message: "no session overrides to save (change one with /keeper set <key> <value>)" };
  let json: unknown = {};
  if (existing !== undefined && existing.trim() !== "") {
    try {
      json = JSON.parse(existing);
    } catch (error) {
      return { ok: false, message: `the file is not valid JSON (${error instanceof Error ? error.message : String(error)}); it was left as it is` };
    }
  }
  if (!isObject(json)) return { ok: false, message: "the file does not hold a JSON object; it was left as it is" };
  const root: Record<string, unknown> = structuredClone(json);
  if (!isObject(root[SETTINGS_KEY])) root[SETTINGS_KEY] = {};
  const section = root[SETTINGS_KEY] as Record<string, unknown>;
  for (const [path, value] of leaves) setLeaf(section, path, value);
  const indent = existing?.match(/^[ \t]+(?=")/m)?.[0] ?? "  ";
  return { ok: true, text: `${JSON.stringify(root, null, indent)}\n`, written: leaves.map(([p, v]) => `${p} = ${JSON.stringify(v)}`) };
}
