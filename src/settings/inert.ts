/**
 * Settings that have no effect as the others stand: a key changed from its default (in a file
 * or for the session) while the switch or mode it depends on makes the code never read it —
 * `summarizer.model` under `summarizer.mode: "extractive"`, a budget trigger's fraction with
 * the trigger off. `/keeper` lists them as warnings, and `/keeper set` says so when the key it
 * set, or the one it switched, leaves a changed key without effect. Pure.
 */
import { SETTING_KEYS, valueAt } from "./keys.ts";
import type { KeeperSettings } from "./schema.ts";

export interface InertRule {
  /** Keys (or key prefixes ending in ".") the rule covers. */
  keys: readonly string[];
  /** The setting whose value makes them inert. */
  because: string;
  /** Whether the keys are inert under these settings. */
  holds: (s: KeeperSettings) => boolean;
  /** Why, in words, and how to make them count. */
  reason: (s: KeeperSettings) => string;
}

/** In order: the first rule that holds for a key explains it. */
export const INERT_RULES: readonly InertRule[] = [
  {
    keys: ["pruning.", "summarizer."],
    because: "pruning.enabled",
    holds: (s) => !s.pruning.enabled,
    reason: () => "pruning.enabled is false (nothing is pruned or summarized)",
  },
  {
    keys: ["summarizer.model", "summarizer.idleTimeoutMs", "summarizer.ceilingTimeoutMs"],
    because: "summarizer.mode",
    holds: (s) => s.summarizer.mode === "extractive",
    reason: () => 'summarizer.mode is "extractive", which never calls a model (set summarizer.mode to auto or model to use it)',
  },
  {
    keys: ["pruning.errorPurge.cooldownTurns"],
    because: "pruning.errorPurge.enabled",
    holds: (s) => !s.pruning.errorPurge.enabled,
    reason: () => "pruning.errorPurge.enabled is false",
  },
  {
    keys: ["pruning.chainCompression.rollingWindow", "pruning.chainCompression.keptFactChars"],
    because: "pruning.chainCompression.enabled",
    holds: (s) => !s.pruning.chainCompression.enabled,
    reason: () => "pruning.chainCompression.enabled is false",
  },
  {
    keys: ["pruning.budgetTrigger.fraction", "pruning.budgetTrigger.maxTokens"],
    because: "pruning.budgetTrigger.enabled",
    holds: (s) => !s.pruning.budgetTrigger.enabled,
    reason: () => "pruning.budgetTrigger.enabled is false",
  },
  {
    keys: ["thinkingStrip.keepLastTurns"],
    because: "thinkingStrip.mode",
    holds: (s) => s.thinkingStrip.mode === "off",
    reason: () => 'thinkingStrip.mode is "off"',
  },
  {
    keys: ["cache.seam", "cache.gridChunkTokens", "cache.keepTailTokens", "cache.minNetSaving", "cache.horizonCap"],
    because: "cache.discipline",
    holds: (s) => !s.cache.discipline,
    reason: () => "cache.discipline is false (every flush applies everything it proposes)",
  },
];

const covers = (rule: InertRule, path: string): boolean => rule.keys.some((k) => (k.endsWith(".") ? path.startsWith(k) : path === k));

export interface InertSetting {
  path: string;
  /** The setting that makes it inert. */
  because: string;
  /** `summarizer.model = "x/y" has no effect: summarizer.mode is "extractive", …` */
  text: string;
}

/**
 * Keys changed from their defaults that have no effect under `settings`. With the extension
 * off nothing has an effect, and the headline says so: no list then.
 */
export function inertSettings(settings: KeeperSettings): InertSetting[] {
  if (!settings.enabled) return [];
  const out: InertSetting[] = [];
  for (const key of SETTING_KEYS) {
    const value = valueAt(settings, key.path);
    if (JSON.stringify(value) === JSON.stringify(key.defaultValue)) continue;
    const rule = INERT_RULES.find((r) => covers(r, key.path) && r.because !== key.path && r.holds(settings));
    if (!rule) continue;
    out.push({ path: key.path, because: rule.because, text: `${key.path} = ${JSON.stringify(value)} has no effect: ${rule.reason(settings)}` });
  }
  return out;
}

/** The inert keys a `/keeper set <path>` concerns: the key itself, or the keys its switch made inert. */
export function inertAfterSet(settings: KeeperSettings, path: string): InertSetting[] {
  return inertSettings(settings).filter((i) => i.path === path || i.because === path);
}
