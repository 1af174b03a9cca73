/**
 * One entry point: the live host, the replay, the fuzzer and the benches drive the engine
 * through `step` and the pure queries of `index.ts`. Every other module under `src/engine/`
 * is internal: the index does not export the named transitions, and no module outside
 * `src/engine/` imports a value from any engine module but the index (types are fine:
 * `FlushResult` is what an effect carries).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sourceFiles, valueImports } from "../../test/support/value-imports.ts";
import * as engine from "./index.ts";

const ROOT = join(import.meta.dir, "..", "..");
/** Any engine module but the index, by specifier (relative or from the repo root). */
const INTERNAL = /(^|\/)engine\/(?!index(\.ts)?$)[\w./-]+$/;
const TRANSITIONS = ["render", "send", "observeUsage", "compacted", "startFlush", "completeFlush", "adoptFlush", "outsideContextDropped", "beginFlush", "finishFlush", "withoutSpillFailures", "decideFlush", "budgetStep", "ledgerOnSend", "ledgerOnUsage", "renderWithMemo", "renderAhead"];

describe("the engine's one entry point", () => {
  test("the index exports step and none of the named transitions", () => {
    expect(typeof engine.step).toBe("function");
    expect(Object.keys(engine).filter((k) => TRANSITIONS.includes(k))).toEqual([]);
  });

  test("the detector sees value imports of any engine module but the index, not type-only ones", () => {
    const internal = (text: string) => valueImports("a.ts", text, (spec) => INTERNAL.test(spec));
    expect(internal('import { render } from "../engine/session.ts";')).toEqual(["../engine/session.ts"]);
    expect(internal('import * as s from "../../src/engine/session.ts";')).toEqual(["../../src/engine/session.ts"]);
    expect(internal('import { keeperRender } from "../engine/render.ts";')).toEqual(["../engine/render.ts"]);
    expect(internal('import { x } from "../engine/compaction/turn-end.ts";')).toEqual(["../engine/compaction/turn-end.ts"]);
    expect(internal('import { finishFlush, type FlushResult } from "./flush.ts";')).toEqual([]);
    expect(internal('import type { FlushResult } from "../engine/flush.ts";')).toEqual([]);
    expect(internal('import { step } from "../engine/index.ts";')).toEqual([]);
  });

  test("no module outside src/engine/ imports a value from an engine module other than the index", () => {
    const files = ["src", "test", "bench", "scripts"].flatMap((d) => sourceFiles(join(ROOT, d), { tests: true }));
    expect(files.length).toBeGreaterThan(200);
    const offenders: string[] = [];
    for (const file of files) {
      const rel = relative(ROOT, file).split("\\").join("/");
      if (rel.startsWith("src/engine/")) continue;
      for (const spec of valueImports(file, readFileSync(file, "utf8"), (s) => INTERNAL.test(s))) offenders.push(`${rel} imports a value from ${spec}`);
    }
    expect(offenders).toEqual([]);
  });
});
