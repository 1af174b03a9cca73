import { describe, expect, test } from "bun:test";
import { SETTING_KEYS, closestMatches, didYouMean } from "./keys.ts";
import { applyOverrides, overrideLeaves, parseSettingValue, withOverride, withoutOverride } from "./overrides.ts";
import { DEFAULT_SETTINGS, defaultsOf } from "./parse.ts";
import { settingsTextWithOverrides } from "./save.ts";

describe("setting keys come from the schema", () => {
  test("every leaf of the defaults is a key, with its default and kind", () => {
    const leaves: string[] = [];
    const walk = (v: unknown, prefix: string) => {
      if (typeof v === "object" && v !== null && !Array.isArray(v)) for (const [k, inner] of Object.entries(v)) walk(inner, prefix ? `${prefix}.${k}` : k);
      else leaves.push(prefix);
    };
    walk(defaultsOf(), "");
    expect(SETTING_KEYS.map((k) => k.path)).toEqual(leaves);
    const mode = SETTING_KEYS.find((k) => k.path === "thinkingStrip.mode")!;
    expect(mode.kind).toBe("enum");
    expect(mode.values).toEqual(["auto", "off", "flush-gated"]);
    expect(SETTING_KEYS.find((k) => k.path === "pruning.minBatchChars")!.kind).toBe("integer");
    expect(SETTING_KEYS.find((k) => k.path === "pruning.budgetTrigger.fraction")!.kind).toBe("number");
  });

  test("did you mean: a typo, a bare last segment, nothing for gibberish", () => {
    const paths = SETTING_KEYS.map((k) => k.path);
    expect(closestMatches("pruning.enabeld", paths)[0]).toBe("pruning.enabled");
    expect(closestMatches("keepLastTurns", paths)).toEqual(["thinkingStrip.keepLastTurns"]);
    expect(didYouMean("zzzzzzzzzzzz", paths)).toBe("");
    expect(didYouMean("stat", ["stats", "now", "why"])).toBe(' Did you mean "stats"?');
  });
});

describe("values typed in Pi are read by kind and validated by the same schema", () => {
  test("booleans, numbers, enums, lists", () => {
    expect(parseSettingValue("pruning.enabled", "off")).toEqual({ ok: true, value: false });
    expect(parseSettingValue("statusLine", "yes")).toEqual({ ok: true, value: true });
    expect(parseSettingValue("pruning.minBatchChars", "2_000")).toEqual({ ok: true, value: 2000 });
    expect(parseSettingValue("thinkingStrip.mode", "flush-gated")).toEqual({ ok: true, value: "flush-gated" });
    expect(parseSettingValue("pruning.protectedTools", "read, bash")).toEqual({ ok: true, value: ["read", "bash"] });
    expect(parseSettingValue("pruning.protectedTools", '["a b"]')).toEqual({ ok: true, value: ["a b"] });
    expect(parseSettingValue("summarizer.model", '""')).toEqual({ ok: true, value: "" });
  });

  test("bad values are refused with the key and what it accepts", () => {
    const r1 = parseSettingValue("thinkingStrip.mode", "sometimes");
    expect(r1.ok).toBe(false);
    if (!r1.ok) expect(r1.message).toContain("one of auto, off, flush-gated");
    const r2 = parseSettingValue("pruning.minBatchChars", "-5");
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.message).toContain("pruning.minBatchChars");
    expect(parseSettingValue("pruning.minBatchChars", "1.5").ok).toBe(false);
    expect(parseSettingValue("pruning.budgetTrigger.fraction", "0").ok).toBe(false);
    expect(parseSettingValue("pruning.enabled", "maybe").ok).toBe(false);
    const r3 = parseSettingValue("thinkingStrip.keepLastTurn", "4");
    expect(r3.ok).toBe(false);
    if (!r3.ok) expect(r3.message).toContain('Did you mean "thinkingStrip.keepLastTurns"');
  });
});

describe("overrides lie over the files' settings", () => {
  test("set, list, reset one, reset all", () => {
    const fromFiles = applyOverrides(DEFAULT_SETTINGS, { statusLine: false });
    let o = withOverride({}, "thinkingStrip.mode", "off");
    o = withOverride(o, "pruning.errorPurge.cooldownTurns", 9);
    const eff = applyOverrides(fromFiles, o);
    expect(eff.thinkingStrip).toEqual({ mode: "off", keepLastTurns: DEFAULT_SETTINGS.thinkingStrip.keepLastTurns });
    expect(eff.pruning.errorPurge.cooldownTurns).toBe(9);
    expect(eff.statusLine).toBe(false);
    expect(overrideLeaves(o)).toEqual([
      ["pruning.errorPurge.cooldownTurns", 9],
      ["thinkingStrip.mode", "off"],
    ]);
    const one = withoutOverride(o, "pruning.errorPurge.cooldownTurns");
    expect(one).toEqual({ thinkingStrip: { mode: "off" } });
    expect(withoutOverride(o)).toEqual({});
  });
});

describe("/keeper save keeps every other key of the file", () => {
  const overrides = withOverride(withOverride({}, "thinkingStrip.mode", "off"), "enabled", false);

  test("merges into an existing contextKeeper section, keeps other keys and their order", () => {
    const text = JSON.stringify({ theme: "dark", contextKeeper: { statusLine: false, thinkingStrip: { keepLastTurns: 8 } }, zeta: [1] }, null, 4);
    const r = settingsTextWithOverrides(text, overrides);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const json = JSON.parse(r.text);
    expect(Object.keys(json)).toEqual(["theme", "contextKeeper", "zeta"]);
    expect(json.contextKeeper).toEqual({ statusLine: false, thinkingStrip: { keepLastTurns: 8, mode: "off" }, enabled: false });
    expect(r.text).toContain('\n    "theme"'); // the file's indentation
    expect(r.written).toEqual(['enabled = false', 'thinkingStrip.mode = "off"']);
  });

  test("a missing file gets just the section; an unparsable file or no overrides is refused", () => {
    const r = settingsTextWithOverrides(undefined, overrides);
    expect(r.ok && JSON.parse(r.text)).toEqual({ contextKeeper: { enabled: false, thinkingStrip: { mode: "off" } } });
    const bad = settingsTextWithOverrides("{ nope", overrides);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.message).toContain("left as it is");
    expect(settingsTextWithOverrides("[1]", overrides).ok).toBe(false);
    expect(settingsTextWithOverrides("{}", {}).ok).toBe(false);
  });
});
