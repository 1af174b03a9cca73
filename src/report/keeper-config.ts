/**
 * What the keeper replay engine reads: the pruning config, the thinking-strip settings, the
 * budget trigger and the summarizer mode, derived from the user-facing settings (`src/settings/schema.ts`) so an
 * arm is "these settings", never a second set of defaults.
 */
import { pruneConfigFrom } from "../engine/index.ts";
import type { PruneConfig } from "../prune/config.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { ThinkingStripMode } from "../thinking/index.ts";

export interface KeeperReplayConfig {
  /** The settings the arm runs with: the live extension's render and flush read exactly these. */
  settings: KeeperSettings;
  /** Master switch: off means the recorded context goes out unchanged. */
  enabled: boolean;
  prune: PruneConfig;
  thinking: { mode: ThinkingStripMode; keepLastTurns: number };
  /** `summarizer.mode`, and the request horizon's cap (`cache.horizonCap`) the `auto` choice counts with. */
  summarizer: { mode: KeeperSettings["summarizer"]["mode"]; horizonCap: number };
}

/** Deep-partial settings, for arm definitions. */
export type SettingsOverride = {
  [K in keyof KeeperSettings]?: KeeperSettings[K] extends object ? { [L in keyof KeeperSettings[K]]?: Partial<KeeperSettings[K][L]> | KeeperSettings[K][L] } : KeeperSettings[K];
};

function mergeDeep<T>(base: T, over: unknown): T {
  if (over === undefined) return base;
  if (typeof base !== "object" || base === null || Array.isArray(base) || typeof over !== "object" || over === null) return over as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over as Record<string, unknown>)) out[k] = mergeDeep(out[k], v);
  return out as T;
}

export function applySettingsOverride(base: KeeperSettings, override: SettingsOverride): KeeperSettings {
  return mergeDeep(base, override);
}

export function keeperReplayConfig(settings: KeeperSettings = DEFAULT_SETTINGS): KeeperReplayConfig {
  return {
    settings,
    enabled: settings.enabled,
    prune: pruneConfigFrom(settings),
    thinking: { mode: settings.thinkingStrip.mode, keepLastTurns: settings.thinkingStrip.keepLastTurns },
    summarizer: { mode: settings.summarizer.mode, horizonCap: settings.cache.horizonCap },
  };
}
