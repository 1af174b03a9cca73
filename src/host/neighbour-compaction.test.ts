/**
 * Another async compaction among Pi's commands: found by its `/async-compact-now` (renamed or
 * not) from another extension file, never this copy's; a typed `/async-compact-now` is routed
 * to it with its arguments, other input is left alone. The e2e twin is
 * test/e2e/beside-async-compaction.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { SlashCommandInfo } from "@earendil-works/pi-coding-agent";
import { COMPACT_NOW_DESCRIPTION } from "./compaction-command.ts";
import { findOtherCompaction, routeCompactNow } from "./neighbour-compaction.ts";

const ROOT = join(import.meta.dir, "..", "..");
const command = (name: string, path: string, description = "Start async compaction now"): SlashCommandInfo =>
  ({ name, description, source: "extension", sourceInfo: { path, source: "local", scope: "temporary", origin: "top-level" } }) as SlashCommandInfo;
const OURS = command("async-compact-now:1", join(ROOT, "index.ts"), COMPACT_NOW_DESCRIPTION);

describe("findOtherCompaction", () => {
  test("the keeper's command alone: none", () => {
    expect(findOtherCompaction([command("async-compact-now", join(ROOT, "index.ts"), COMPACT_NOW_DESCRIPTION), command("keeper", join(ROOT, "index.ts"))], ROOT)).toBeUndefined();
  });

  test("another extension's, renamed by Pi, even from a file inside this folder", () => {
    const other = join(ROOT, "test", "support", "async-compaction-standin", "index.ts");
    expect(findOtherCompaction([OURS, command("async-compact-now:2", other)], ROOT)).toEqual({ invocationName: "async-compact-now:2", path: other });
  });

  test("a prompt template or skill of that name is not an extension's command", () => {
    expect(findOtherCompaction([OURS, { ...command("async-compact-now:2", "/x/p.md"), source: "prompt" }], ROOT)).toBeUndefined();
  });

  test("inline extensions (no file): told apart by the keeper's description", () => {
    expect(findOtherCompaction([command("async-compact-now:1", "<inline:1>", COMPACT_NOW_DESCRIPTION), command("async-compact-now:2", "<inline:2>")], ROOT)).toEqual({
      invocationName: "async-compact-now:2",
      path: "<inline:2>",
    });
  });
});

describe("routeCompactNow", () => {
  const other = { invocationName: "async-compact-now:2", path: "/x/index.ts" };
  const sent: Array<{ text: string; options: unknown }> = [];
  const pi = { sendUserMessage: (text: unknown, options: unknown) => void sent.push({ text: String(text), options }) };
  const input = (text: string, source: "interactive" | "rpc" | "extension" = "interactive") => ({ type: "input" as const, text, source });

  test("typed, with arguments: the other's command runs, the input is handled", () => {
    sent.length = 0;
    expect(routeCompactNow(pi, other, input("/async-compact-now"))).toEqual({ action: "handled" });
    expect(routeCompactNow(pi, other, input(" /async-compact-now  focus on tests ", "rpc"))).toEqual({ action: "handled" });
    expect(sent).toEqual([
      { text: "/async-compact-now:2", options: { expandPromptTemplates: true } },
      { text: "/async-compact-now:2 focus on tests", options: { expandPromptTemplates: true } },
    ]);
  });

  test("anything else, input an extension sent, or no other compaction: left alone", () => {
    sent.length = 0;
    expect(routeCompactNow(pi, other, input("/async-compact-nowish"))).toBeUndefined();
    expect(routeCompactNow(pi, other, input("please /async-compact-now"))).toBeUndefined();
    expect(routeCompactNow(pi, other, input("/async-compact-now", "extension"))).toBeUndefined();
    expect(routeCompactNow(pi, undefined, input("/async-compact-now"))).toBeUndefined();
    expect(sent).toEqual([]);
  });
});
