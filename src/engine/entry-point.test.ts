/**
 * One entry point: the live host, the replay, the fuzzer and the benches drive the engine
 * through `step` (index.ts). The named transitions (`session.ts`, `flush.ts`) are its
 * internals: the index does not export them, and no module outside `src/engine/` imports a
 * value from those two files (types are fine: `FlushResult` is what an effect carries).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sourceFiles, valueImports } from "../../test/support/value-imports.ts";
import * as engine from "./index.ts";

const ROOT = join(import.meta.dir, "..", "..");
const INTERNALS = /(^|\/)engine\/(session|flush)(\.ts)?$/;
const TRANSITIONS = ["render", "send", "observeUsage", "compacted", "startFlush", "completeFlush", "adoptFlush", "outsideContextDropped", "beginFlush", "finishFlush", "withoutSpillFailures"];

describe("the engine's one entry point", () => {
  test("the index exports step and none of the named transitions", () => {
    expect(typeof engine.step).toBe("function");
    expect(Object.keys(engine).filter((k) => TRANSITIONS.includes(k))).toEqual([]);
  });

  test("the detector sees value imports of the internals, not type-only ones", () => {
    const internal = (text: string) => valueImports("a.ts", text, (spec) => INTERNALS.test(spec));
    expect(internal('import { render } from "../engine/session.ts";')).toEqual(["../engine/session.ts"]);
    expect(internal('import * as s from "../../src/engine/session.ts";')).toEqual(["../../src/engine/session.ts"]);
    expect(internal('import { finishFlush, type FlushResult } from "./flush.ts";')).toEqual([]);
    expect(internal('import { finishFlush } from "../engine/flush.ts";')).toEqual(["../engine/flush.ts"]);
    expect(internal('import type { FlushResult } from "../engine/flush.ts";')).toEqual([]);
    expect(internal('import { step } from "../engine/index.ts";')).toEqual([]);
  });

  test("no module outside src/engine/ imports a value from session.ts or flush.ts", () => {
    const files = ["src", "test", "bench", "scripts"].flatMap((d) => sourceFiles(join(ROOT, d), { tests: true }));
    expect(files.length).toBeGreaterThan(200);
    const offenders: string[] = [];
    for (const file of files) {
      const rel = relative(ROOT, file).split("\\").join("/");
      if (rel.startsWith("src/engine/")) continue;
      for (const spec of valueImports(file, readFileSync(file, "utf8"), (s) => INTERNALS.test(s))) offenders.push(`${rel} imports a value from ${spec}`);
    }
    expect(offenders).toEqual([]);
  });
});
