import { describe, expect, test } from "bun:test";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { budgetTriggerFires } from "./triggers.ts";

const live = (settings: KeeperSettings = DEFAULT_SETTINGS, contextTokens = 100_000, tokensAtLastFlush = 0) =>
  budgetTriggerFires({ settings, contextTokens, tokensAtLastFlush, contextWindow: 200_000 });

describe("the engine's budget rule", () => {
  test("defaults are the headroom trigger: half the 200k window, capped at 150k", () => {
    expect(DEFAULT_SETTINGS.pruning.budgetTrigger).toEqual({ enabled: true, fraction: 0.5, maxTokens: 150_000 });
    expect(live()).toBe(true);
    expect(live(DEFAULT_SETTINGS, 60_000)).toBe(false);
  });

  test("after a flush it needs a quarter of the threshold of growth (the shared leaf rule)", () => {
    expect(live(DEFAULT_SETTINGS, 120_000, 100_000)).toBe(false);
    expect(live(DEFAULT_SETTINGS, 125_000, 100_000)).toBe(true);
  });

  test("master switch, pruning or the trigger off never fires", () => {
    expect(live({ ...DEFAULT_SETTINGS, enabled: false })).toBe(false);
    expect(live({ ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, enabled: false } })).toBe(false);
    const off = { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false };
    expect(live({ ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, budgetTrigger: off } }, 500_000)).toBe(false);
  });
});
