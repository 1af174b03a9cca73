import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PI_COMPACTION_DEFAULTS } from "../pi-compaction.ts";
import { piCompactionSettingsFrom, piCompactionSettingsLookup } from "./pi-settings.ts";

const sonnet = { provider: "anthropic", model: "claude-sonnet-4-5" };
const big = { provider: "some-provider", model: "big/model" };

describe("Pi's compaction settings for the report", () => {
  test("none: Pi's defaults", () => {
    expect(piCompactionSettingsFrom({}, "s.json").settings(sonnet)).toEqual(PI_COMPACTION_DEFAULTS);
    expect(piCompactionSettingsFrom({ compaction: [] }, "s.json").settings(sonnet)).toEqual(PI_COMPACTION_DEFAULTS);
  });

  test("the ordinary values, then a model's override, each value falling back on its own", () => {
    const lookup = piCompactionSettingsFrom({ compaction: { enabled: true, reserveTokens: 30_000, modelOverrides: { "some-provider/big/model": { reserveTokens: 400_000 } } } }, "s.json");
    expect(lookup.notes).toEqual([]);
    expect(lookup.settings(sonnet)).toEqual({ enabled: true, reserveTokens: 30_000, keepRecentTokens: 20_000 });
    expect(lookup.settings(big)).toEqual({ enabled: true, reserveTokens: 400_000, keepRecentTokens: 20_000 });
    expect(piCompactionSettingsFrom({ compaction: { enabled: false } }, "s.json").settings(sonnet).enabled).toBe(false);
  });

  test("a value Pi would refuse is named, and Pi's default used for it", () => {
    const lookup = piCompactionSettingsFrom({ compaction: { enabled: "yes", keepRecentTokens: -1, reserveTokens: 8_000, modelOverrides: { "a/b": 3, "some-provider/big/model": { reserveTokens: 1.5 } } } }, "s.json");
    expect(lookup.settings(sonnet)).toEqual({ enabled: true, reserveTokens: 8_000, keepRecentTokens: 20_000 });
    expect(lookup.settings(big)).toEqual({ enabled: true, reserveTokens: 8_000, keepRecentTokens: 20_000 });
    expect(lookup.notes).toEqual([
      's.json: compaction.enabled is "yes", not true or false: Pi\'s default used',
      "s.json: compaction.keepRecentTokens is -1, not a whole number of tokens ≥ 0: Pi's default 20000 used",
      's.json: compaction.modelOverrides["a/b"] is not an object: ignored',
      's.json: compaction.modelOverrides["some-provider/big/model"].reserveTokens is 1.5, not a whole number of tokens ≥ 0: Pi\'s default 16384 used',
    ]);
  });

  test("read from the agent's settings.json: missing is Pi's defaults, not JSON is a note", () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-settings-"));
    try {
      expect(piCompactionSettingsLookup(dir)).toMatchObject({ notes: [] });
      writeFileSync(join(dir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 5_000 } }));
      expect(piCompactionSettingsLookup(dir).settings(sonnet).keepRecentTokens).toBe(5_000);
      writeFileSync(join(dir, "settings.json"), "{ not json");
      const bad = piCompactionSettingsLookup(dir);
      expect(bad.settings(sonnet)).toEqual(PI_COMPACTION_DEFAULTS);
      expect(bad.notes[0]).toContain("is not JSON");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
