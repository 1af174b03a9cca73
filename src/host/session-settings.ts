/**
 * Edge: the settings of this Pi run — what the files say (re-read at every session start) with
 * the session overrides from `/keeper set|on|off` laid over them. Overrides live in memory
 * until Pi exits or `/keeper reset`; only `/keeper save` writes them to a file.
 */
import type { LoadedSettings } from "../settings/load.ts";
import { applyOverrides, overrideLeaves, withOverride, withoutOverride } from "../settings/overrides.ts";
import { DEFAULT_SETTINGS, type PartialSettings } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";

export interface SessionSettings {
  /** Adopt freshly loaded files; the overrides stay. */
  load(loaded: LoadedSettings): void;
  current(): KeeperSettings;
  loaded(): LoadedSettings;
  overrides(): PartialSettings;
  overriddenKeys(): string[];
  set(path: string, value: unknown): void;
  /** Drop one override, or all. Returns whether anything was dropped. */
  reset(path?: string): boolean;
}

export function createSessionSettings(): SessionSettings {
  let loaded: LoadedSettings = { settings: DEFAULT_SETTINGS, diagnostics: [], sources: [], layers: [] };
  let overrides: PartialSettings = {};
  let current: KeeperSettings = DEFAULT_SETTINGS;
  const recompute = () => {
    current = applyOverrides(loaded.settings, overrides);
  };
  return {
    load(next) {
      loaded = next;
      recompute();
    },
    current: () => current,
    loaded: () => loaded,
    overrides: () => overrides,
    overriddenKeys: () => overrideLeaves(overrides).map(([path]) => path),
    set(path, value) {
      overrides = withOverride(overrides, path, value);
      recompute();
    },
    reset(path) {
      const before = overrideLeaves(overrides).length;
      overrides = withoutOverride(overrides, path);
      recompute();
      return overrideLeaves(overrides).length !== before;
    },
  };
}
