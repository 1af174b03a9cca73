/**
 * Pi's compaction settings as the user's Pi reads them, for the report's simulation of Pi's
 * threshold compaction (`src/report/pi-compaction.ts`): the `compaction` block of the agent's
 * `settings.json` (`enabled`, `reserveTokens`, `keepRecentTokens`, and `modelOverrides` keyed
 * `provider/modelId`, each value falling back on its own to the ordinary setting, then to
 * Pi's default). A project's `.pi/settings.json` is not read (a session's project may not be
 * on this machine). A value Pi would refuse (not a non-negative safe integer, `enabled` not a
 * boolean) is named in a note and Pi's default used instead.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PI_COMPACTION_DEFAULTS, type PiCompactionSettings } from "../pi-compaction.ts";

export interface PiCompactionLookup {
  settings: (ref: { provider: string; model: string }) => PiCompactionSettings;
  notes: string[];
}

type Budgets = Partial<Pick<PiCompactionSettings, "reserveTokens" | "keepRecentTokens">>;

const isTokens = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function budgetsOf(block: Record<string, unknown>, where: string, notes: string[]): Budgets {
  const out: Budgets = {};
  for (const key of ["reserveTokens", "keepRecentTokens"] as const) {
    const v = block[key];
    if (v === undefined) continue;
    if (isTokens(v)) out[key] = v;
    else notes.push(`${where}.${key} is ${JSON.stringify(v)}, not a whole number of tokens ≥ 0: Pi's default ${PI_COMPACTION_DEFAULTS[key]} used`);
  }
  return out;
}

/** The lookup from a parsed settings object (`where` names the file in notes). */
export function piCompactionSettingsFrom(settings: unknown, where: string): PiCompactionLookup {
  const notes: string[] = [];
  const block = (settings as { compaction?: unknown } | null)?.compaction;
  if (block === undefined || block === null || typeof block !== "object" || Array.isArray(block)) return { settings: () => PI_COMPACTION_DEFAULTS, notes };
  const c = block as Record<string, unknown>;
  let enabled = PI_COMPACTION_DEFAULTS.enabled;
  if (typeof c.enabled === "boolean") enabled = c.enabled;
  else if (c.enabled !== undefined) notes.push(`${where}: compaction.enabled is ${JSON.stringify(c.enabled)}, not true or false: Pi's default used`);
  const ordinary = { ...PI_COMPACTION_DEFAULTS, enabled, ...budgetsOf(c, `${where}: compaction`, notes) };
  const overrides = new Map<string, Budgets>();
  const o = c.modelOverrides;
  if (o !== undefined && o !== null && typeof o === "object" && !Array.isArray(o)) {
    for (const [key, value] of Object.entries(o as Record<string, unknown>)) {
      if (value !== null && typeof value === "object" && !Array.isArray(value)) overrides.set(key, budgetsOf(value as Record<string, unknown>, `${where}: compaction.modelOverrides["${key}"]`, notes));
      else notes.push(`${where}: compaction.modelOverrides["${key}"] is not an object: ignored`);
    }
  }
  return { settings: (ref) => ({ ...ordinary, ...overrides.get(`${ref.provider}/${ref.model}`) }), notes };
}

/** The lookup from `<agentDir>/settings.json`; Pi's defaults when there is none. */
export function piCompactionSettingsLookup(agentDir: string): PiCompactionLookup {
  const path = join(agentDir, "settings.json");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { settings: () => PI_COMPACTION_DEFAULTS, notes: [] };
  }
  try {
    return piCompactionSettingsFrom(JSON.parse(text), path);
  } catch (error) {
    return { settings: () => PI_COMPACTION_DEFAULTS, notes: [`${path} is not JSON (${(error as Error).message}): Pi's default compaction settings used`] };
  }
}
