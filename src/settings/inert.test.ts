import { describe, expect, test } from "bun:test";
import { SETTING_KEYS } from "./keys.ts";
import { INERT_RULES, inertAfterSet, inertSettings } from "./inert.ts";
import { summaryRoutes } from "../engine/index.ts";
import { applyOverrides, withOverride } from "./overrides.ts";
import { DEFAULT_SETTINGS, type PartialSettings } from "./parse.ts";

const settingsWith = (...pairs: Array<[string, unknown]>) => applyOverrides(DEFAULT_SETTINGS, pairs.reduce<PartialSettings>((o, [k, v]) => withOverride(o, k, v), {}));

describe("settings that have no effect as the others stand", () => {
  test("summarizer.model under the default extractive mode: said, with how to use it; under auto: nothing", () => {
    const inert = inertSettings(settingsWith(["summarizer.model", "anthropic/claude-haiku-4-5"]));
    expect(inert).toEqual([
      {
        path: "summarizer.model",
        because: "summarizer.mode",
        text: 'summarizer.model = "anthropic/claude-haiku-4-5" has no effect: summarizer.mode is "extractive", which never calls a model (set summarizer.mode to auto or model to use it)',
      },
    ]);
    expect(inertSettings(settingsWith(["summarizer.model", "anthropic/claude-haiku-4-5"], ["summarizer.mode", "auto"]))).toEqual([]);
  });

  test("only keys changed from their defaults; the first rule explains; nothing when the extension is off", () => {
    expect(inertSettings(DEFAULT_SETTINGS)).toEqual([]);
    expect(inertSettings(settingsWith(["pruning.enabled", false]))).toEqual([]);
    const off = settingsWith(["pruning.enabled", false], ["pruning.minBatchChars", 5000], ["summarizer.model", "a/b"], ["cache.discipline", false], ["cache.horizonCap", 9]);
    expect(inertSettings(off).map((i) => [i.path, i.because])).toEqual([
      ["pruning.minBatchChars", "pruning.enabled"],
      ["summarizer.model", "pruning.enabled"],
      ["cache.horizonCap", "cache.discipline"],
    ]);
    expect(inertSettings(settingsWith(["enabled", false], ["summarizer.model", "a/b"]))).toEqual([]);
  });

  test("/keeper set: the key set, or the keys its switch left without effect", () => {
    const s = settingsWith(["pruning.budgetTrigger.fraction", 0.8], ["pruning.budgetTrigger.enabled", false], ["thinkingStrip.keepLastTurns", 4]);
    expect(inertAfterSet(s, "pruning.budgetTrigger.enabled").map((i) => i.path)).toEqual(["pruning.budgetTrigger.fraction"]);
    expect(inertAfterSet(s, "pruning.budgetTrigger.fraction").map((i) => i.path)).toEqual(["pruning.budgetTrigger.fraction"]);
    expect(inertAfterSet(s, "thinkingStrip.keepLastTurns")).toEqual([]);
    expect(inertAfterSet(settingsWith(["thinkingStrip.keepLastTurns", 4], ["thinkingStrip.mode", "off"]), "thinkingStrip.mode").map((i) => i.path)).toEqual(["thinkingStrip.keepLastTurns"]);
  });

  test("every key and switch a rule names is a setting; a prefix covers some", () => {
    const paths = SETTING_KEYS.map((k) => k.path);
    for (const rule of INERT_RULES) {
      expect(paths).toContain(rule.because);
      for (const k of rule.keys) expect(k.endsWith(".") ? paths.some((p) => p.startsWith(k) && p !== rule.because) : paths.includes(k)).toBe(true);
    }
  });

  test("the warning is true: under extractive, the flush routes no batch to a model, whatever summarizer.model says", () => {
    const settings = settingsWith(["summarizer.model", "anthropic/claude-haiku-4-5"]);
    expect(inertSettings(settings).map((i) => i.path)).toEqual(["summarizer.model"]);
    const batches = [{ batchKey: "b", assistantTimestamp: 1, calls: [] }];
    expect(summaryRoutes({ settings, batches, requestFacts: undefined })).toEqual([false]);
    expect(summaryRoutes({ settings: settingsWith(["summarizer.model", "a/b"], ["summarizer.mode", "model"]), batches, requestFacts: undefined })).toEqual([true]);
  });
});
