import { describe, expect, test } from "bun:test";
import { applyOverrides } from "../settings/overrides.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { SETTING_KEYS } from "../settings/keys.ts";
import { helpText, parseKeeperCommand, SUBCOMMANDS } from "./keeper-command.ts";
import { keeperCompletions } from "./keeper-completions.ts";

describe("/keeper arguments → action", () => {
  test("plain subcommands", () => {
    expect(parseKeeperCommand("")).toEqual({ kind: "show" });
    expect(parseKeeperCommand("  STATS ")).toEqual({ kind: "stats" });
    expect(parseKeeperCommand("off")).toEqual({ kind: "off" });
    expect(parseKeeperCommand("on")).toEqual({ kind: "on" });
    expect(parseKeeperCommand("now please")).toMatchObject({ kind: "error" });
  });

  test("set validates through the schema; key=value works too", () => {
    expect(parseKeeperCommand("set thinkingStrip.mode off")).toEqual({ kind: "set", key: "thinkingStrip.mode", value: "off" });
    expect(parseKeeperCommand("set pruning.minBatchChars=3000")).toEqual({ kind: "set", key: "pruning.minBatchChars", value: 3000 });
    expect(parseKeeperCommand("set pruning.protectedTools read, grep")).toEqual({ kind: "set", key: "pruning.protectedTools", value: ["read", "grep"] });
    const bad = parseKeeperCommand("set thinkingStrip.mode sometimes");
    expect(bad.kind).toBe("error");
    const typo = parseKeeperCommand("set thinkingstrip.keepLastTurn 8");
    expect(typo).toMatchObject({ kind: "error" });
    if (typo.kind === "error") expect(typo.message).toContain('Did you mean "thinkingStrip.keepLastTurns"');
    const missing = parseKeeperCommand("set cache.seam");
    if (missing.kind === "error") expect(missing.message).toContain("a value is missing");
    else throw new Error("expected an error");
  });

  test("a bad value is echoed as typed, with what the key takes, and the setting is unchanged", () => {
    const message = (text: string) => {
      const r = parseKeeperCommand(text);
      if (r.kind !== "error") throw new Error(`expected an error for ${text}`);
      return r.message;
    };
    expect(message("set pruning.minBatchChars -5")).toBe('"-5" is not a valid pruning.minBatchChars — it takes a whole number ≥ 0. pruning.minBatchChars is unchanged.');
    expect(message("set pruning.budgetTrigger.fraction 1.5")).toBe('"1.5" is not a valid pruning.budgetTrigger.fraction — it takes a number > 0 and ≤ 1. pruning.budgetTrigger.fraction is unchanged.');
    expect(message("set cache.seam maybe")).toBe('"maybe" is not a valid cache.seam — it takes on or off (true/false). cache.seam is unchanged.');
    expect(message("set summarizer.mode extractiv")).toBe('"extractiv" is not a valid summarizer.mode — it takes one of auto, model, extractive. Did you mean "extractive"? summarizer.mode is unchanged.');
    expect(message("set pruning.protectedTools [1, 2]")).toBe('"[1, 2]" is not a valid pruning.protectedTools — it takes names separated by commas, or a JSON list of strings. pruning.protectedTools is unchanged.');
    expect(message("set cache.seam")).toContain("cache.seam is unchanged");
    // No raw validator text.
    for (const text of ["set pruning.minBatchChars 1.5", "set thinkingStrip.mode x", "set recall.pageChars 0"]) expect(message(text)).not.toMatch(/Invalid|expected|received|Too small/);
  });

  test("why and cache take --detail, nothing else", () => {
    expect(parseKeeperCommand("why")).toEqual({ kind: "why", detail: false });
    expect(parseKeeperCommand("why --detail")).toEqual({ kind: "why", detail: true });
    expect(parseKeeperCommand("cache detail")).toEqual({ kind: "cache", detail: true });
    expect(parseKeeperCommand("cache --all")).toEqual({ kind: "error", message: '/keeper cache takes only --detail (got "--all")' });
  });

  test("reset and save", () => {
    expect(parseKeeperCommand("reset")).toEqual({ kind: "reset" });
    expect(parseKeeperCommand("reset cache.seam")).toEqual({ kind: "reset", key: "cache.seam" });
    expect(parseKeeperCommand("reset cache.seem")).toMatchObject({ kind: "error" });
    expect(parseKeeperCommand("save")).toEqual({ kind: "save" });
    expect(parseKeeperCommand("save project")).toEqual({ kind: "save", target: "project" });
    const bad = parseKeeperCommand("save agnet");
    if (bad.kind === "error") expect(bad.message).toContain('Did you mean "agent"');
    else throw new Error("expected an error");
  });

  test("an unknown subcommand gets a suggestion and the list", () => {
    const r = parseKeeperCommand("stat");
    expect(r.kind).toBe("error");
    if (r.kind !== "error") return;
    expect(r.message).toContain('unknown subcommand "stat". Did you mean "stats"');
    for (const s of SUBCOMMANDS) expect(r.message).toContain(s.name);
    for (const s of SUBCOMMANDS) expect(helpText()).toContain(`/keeper ${s.name}`);
  });
});

describe("completions: every value is the whole argument text", () => {
  test("why and cache complete --detail", () => {
    expect(keeperCompletions("why ")!.map((i) => i.value)).toEqual(["why --detail"]);
    expect(keeperCompletions("cache --d")!.map((i) => i.value)).toEqual(["cache --detail"]);
    expect(keeperCompletions("why x")).toBeNull();
  });

  test("subcommands by prefix", () => {
    expect(keeperCompletions("")!.map((i) => i.label)).toEqual(SUBCOMMANDS.map((s) => s.name));
    expect(keeperCompletions("s")!.map((i) => i.value)).toEqual(["stats", "set ", "save "]);
    expect(keeperCompletions("xyz")).toBeNull();
  });

  test("every key after set, matched on any path segment, with kind, current value and default", () => {
    expect(keeperCompletions("set ")!.map((i) => i.label)).toEqual(SETTING_KEYS.map((k) => k.path));
    const settings = applyOverrides(DEFAULT_SETTINGS, { thinkingStrip: { mode: "off" } });
    const items = keeperCompletions("set keepl", { settings })!;
    expect(items.map((i) => i.value)).toEqual(["set thinkingStrip.keepLastTurns "]);
    expect(keeperCompletions("set keep")!.map((i) => i.label)).toEqual(["pruning.loopFlush.keepRecentSteps", "thinkingStrip.keepLastTurns", "cache.keepTailTokens"]);
    const mode = keeperCompletions("set thinkingStrip.mo", { settings })![0]!;
    expect(mode.description).toBe("auto|off|flush-gated · now off · default auto");
  });

  test("values: enums, booleans, the default for numbers", () => {
    expect(keeperCompletions("set thinkingStrip.mode ")!.map((i) => i.value)).toEqual([
      "set thinkingStrip.mode auto",
      "set thinkingStrip.mode off",
      "set thinkingStrip.mode flush-gated",
    ]);
    expect(keeperCompletions("set cache.seam o")!.map((i) => i.label)).toEqual(["on", "off"]);
    expect(keeperCompletions("set pruning.minBatchChars ")!.map((i) => i.label)).toEqual(["1200"]);
    expect(keeperCompletions("set nosuch.key ")).toBeNull();
    const models = ["anthropic/claude-haiku-4-5", "openai/gpt-5-mini"];
    expect(keeperCompletions("set summarizer.model ", { models })!.map((i) => i.label)).toEqual(['""', ...models]);
    expect(keeperCompletions("set summarizer.model haiku", { models })!.map((i) => i.value)).toEqual(["set summarizer.model anthropic/claude-haiku-4-5"]);
  });

  test("reset offers the overridden keys first; save offers its two files", () => {
    expect(keeperCompletions("reset ", { overridden: ["cache.seam"] })!.map((i) => i.value)).toEqual(["reset cache.seam"]);
    expect(keeperCompletions("reset ")!.length).toBe(SETTING_KEYS.length);
    expect(keeperCompletions("save p")!.map((i) => i.value)).toEqual(["save project"]);
  });
});
