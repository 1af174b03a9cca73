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
