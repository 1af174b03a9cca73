/** What changed in the settings files since the session read them (`/keeper save` reports it). */
import { describe, expect, test } from "bun:test";
import { changedSince, newProblems } from "./file-changes.ts";
import { DEFAULT_SETTINGS, type SettingsDiagnostic } from "./parse.ts";

const at = (patch: (s: typeof DEFAULT_SETTINGS) => void) => {
  const s = structuredClone(DEFAULT_SETTINGS);
  patch(s);
  return s;
};

describe("changedSince", () => {
  test("each key whose value the files give differs, with what the session runs; saved keys left out", () => {
    const then = DEFAULT_SETTINGS;
    const now = at((s) => {
      s.enabled = false;
      s.pruning.minBatchChars = 3000;
      s.pruning.protectedTools = ["bash"];
    });
    const session = at((s) => void (s.pruning.minBatchChars = 3000));
    expect(changedSince({ then, now, session, except: new Set(["pruning.minBatchChars"]) })).toEqual([
      { key: "enabled", files: false, session: true },
      { key: "pruning.protectedTools", files: ["bash"], session: DEFAULT_SETTINGS.pruning.protectedTools },
    ]);
    expect(changedSince({ then, now: then, session })).toEqual([]);
  });
});

describe("newProblems", () => {
  test("only the problems the files did not have before", () => {
    const old: SettingsDiagnostic = { source: "a.json", key: "thinkingStrip.mode", value: '"x"', message: "bad" };
    const fresh: SettingsDiagnostic = { source: "a.json", key: "pruning.minBatchChars", value: "-1", message: "bad" };
    expect(newProblems([old], [old, fresh])).toEqual([fresh]);
  });
});
