/**
 * No module-level mutable state outside the host: every module under src/ but src/host/
 * keeps what it knows in the values it is given and returns (the engine's state, a
 * render's own records), so the engine and the leaves behave the same however many
 * sessions, replays or tests run in one process. The host holds the only handles (Pi, the
 * engine's state cell, timers, a running flush).
 *
 * Allowed, and why: memos of pure functions keyed by an object (a WeakMap: the value is a
 * function of the key alone, never read for anything else, and dies with the key) — no caller
 * can tell whether the memo was hit.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { moduleLevelMutableState } from "../../test/support/module-state.ts";
import { sourceFiles } from "../../test/support/value-imports.ts";

const SRC = join(import.meta.dir, "..");

/** `file: name` → why it may stay. */
const MEMOS: Readonly<Record<string, string>> = {
  "discipline/history-view.ts: charsMemo": "messageChars of a message object",
  "discipline/history-view.ts: bytesMemo": "the serialized bytes of a message object",
  "prune/stub-text.ts: cache": "the stub texts of a keeper state object (states are never changed in place)",
  "cache/estimator-fit.ts: payloads": "the payload sums of a flat block object",
  "report/anthropic-wire.ts: convertedTools": "the wire form of a tool object (a cache mark goes on a copy)",
  "report/anthropic-wire.ts: converted": "the wire form of a content block object (a cache mark goes on a copy)",
};

describe("module-level mutable state", () => {
  test("the detector finds lets, changed containers and instances, not constant tables", () => {
    const found = (text: string) => moduleLevelMutableState("a.ts", text);
    expect(found("let n = 0;\nexport const f = () => n++;")).toEqual(["n (a module-level let)"]);
    expect(found("const seen = new Map<string, number>();\nexport function f(k: string) { seen.set(k, 1); }")).toEqual(["seen (a module-level const changed in place)"]);
    expect(found("const log: string[] = [];\nexport const f = (s: string) => log.push(s);")).toEqual(["log (a module-level const changed in place)"]);
    expect(found("const box = { n: 0 };\nexport const f = () => { box.n += 1; };")).toEqual(["box (a module-level const changed in place)"]);
    expect(found("const hub = new EventEmitter();")).toEqual(["hub (a module-level new EventEmitter)"]);
    expect(found('const NAMES = new Set(["a", "b"]);\nconst RE = new RegExp("x");\nexport const f = (s: string) => NAMES.has(s) && RE.test(s);')).toEqual([]);
    expect(found("export function f() { let n = 0; const m = new Map(); m.set(1, 2); return n; }")).toEqual([]);
  });

  test("no module under src/ outside the host holds module-level mutable state (but the pure memos listed here)", () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    const memosSeen: string[] = [];
    for (const file of files) {
      const rel = relative(SRC, file).split("\\").join("/");
      if (rel.startsWith("host/")) continue;
      const text = readFileSync(file, "utf8");
      for (const what of moduleLevelMutableState(file, text)) {
        const name = what.split(" ")[0];
        const key = `${rel}: ${name}`;
        if (MEMOS[key] && new RegExp(`const ${name} = new WeakMap<`).test(text)) memosSeen.push(key);
        else offenders.push(`src/${rel}: ${what}`);
      }
    }
    expect(offenders).toEqual([]);
    // A memo that is gone must leave the list too.
    expect(memosSeen.sort()).toEqual(Object.keys(MEMOS).sort());
  });
});
