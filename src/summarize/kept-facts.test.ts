import { describe, expect, test } from "bun:test";
import { keptFacts } from "./kept-facts.ts";

const run = (resultText: string, isError = true) => ({ toolName: "bash", resultText, isError });

const VITEST = [
  " RUN  v1.6.0 /project",
  " ✓ test/cache.test.ts > cache > keeps recent entries 3ms",
  " × test/cache.test.ts > cache > evicts the oldest entry 12ms",
  " FAIL  test/cache.test.ts > cache > evicts the oldest entry",
  "AssertionError: expected 3 to be 2 // Object.is equality",
  " ❯ src/cache.ts:88:12",
  "      Tests  1 failed | 38 passed (39)",
  "",
  "Command exited with code 1",
].join("\n");

describe("kept facts of a failed call", () => {
  test("failing tests first, one line per test, then error lines; counts left out", () => {
    expect(keptFacts(run(VITEST), { maxChars: 1000 })).toEqual([
      "× test/cache.test.ts > cache > evicts the oldest entry 12ms",
      "AssertionError: expected 3 to be 2 // Object.is equality",
    ]);
  });

  test("runner styles: jest, TAP, go, pytest, cargo", () => {
    const jest = "FAIL test/a.test.ts\n  ✕ rounds the quota (3 ms)\n  ● a › rounds the quota\n    Expected: 2\nTests:       1 failed, 4 passed, 5 total";
    expect(keptFacts(run(jest), { maxChars: 1000 })).toEqual(["FAIL test/a.test.ts", "● a › rounds the quota"]);
    expect(keptFacts(run("ok 1 - a works\nnot ok 2 - a breaks\n# fail 1"), { maxChars: 1000 })).toEqual(["not ok 2 - a breaks"]);
    expect(keptFacts(run("--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\nFAIL\tpkg 0.01s"), { maxChars: 1000 })).toContain("--- FAIL: TestParse (0.00s)");
    expect(keptFacts(run("FAILED tests/test_a.py::test_x - AssertionError: assert 0 == 1\n1 failed, 3 passed in 0.1s"), { maxChars: 1000 })).toEqual(["FAILED tests/test_a.py::test_x - AssertionError: assert 0 == 1"]);
    expect(keptFacts(run("test parse::empty ... FAILED\ntest parse::full ... ok"), { maxChars: 1000 })).toEqual(["test parse::empty ... FAILED"]);
  });

  test("compiler, linter and runtime errors", () => {
    const tsc = "src/a.ts(4,7): error TS2345: Argument of type 'string' is not assignable.\nsrc/b.ts:9:1 - error TS2532: Object is possibly 'undefined'.\n\nFound 2 errors in 2 files.";
    expect(keptFacts(run(tsc), { maxChars: 1000 })).toEqual(["src/a.ts(4,7): error TS2345: Argument of type 'string' is not assignable.", "src/b.ts:9:1 - error TS2532: Object is possibly 'undefined'."]);
    const lint = "src/a.ts\n  12:7  error  'x' is assigned a value but never used  no-unused-vars\n  30:1  warning  Unexpected console  no-console\n\n✖ 2 problems (1 error, 1 warning)";
    expect(keptFacts(run(lint), { maxChars: 1000 })).toEqual(["12:7  error  'x' is assigned a value but never used  no-unused-vars"]);
    expect(keptFacts(run("Traceback (most recent call last):\n  File \"a.py\", line 3\nValueError: bad value"), { maxChars: 1000 })).toEqual(["ValueError: bad value"]);
    // A missing path is said by the call line ("(failed)" and the path): not kept again.
    expect(keptFacts(run("cat: lib/a.js: No such file or directory"), { maxChars: 1000 })).toEqual([]);
  });

  test("a call that succeeded keeps nothing (file content, passing runs)", () => {
    expect(keptFacts(run("throw new Error('x')\nFAIL is a word here", false), { maxChars: 1000 })).toEqual([]);
  });

  test("a test named again (another marker, another timing) is kept once, the most specific line winning", () => {
    expect(keptFacts(run("✕ rounds (3 ms)\n● a › rounds\n✕ rounds (4 ms)"), { maxChars: 1000 })).toEqual(["● a › rounds"]);
    expect(keptFacts(run("✕ rounds (9 ms)\nerror: x"), { maxChars: 1000, skip: new Set(["✕ rounds (3 ms)"]) })).toEqual(["error: x"]);
  });

  test("within the budget: a line that does not fit is skipped, a shorter later one may fit; long lines are cut; lines kept elsewhere are skipped", () => {
    const text = ["FAIL " + "a".repeat(50), "FAIL " + "b".repeat(10), "error: c"].join("\n");
    expect(keptFacts(run(text), { maxChars: 30 })).toEqual(["FAIL " + "b".repeat(10), "error: c"]);
    const long = keptFacts(run("error: " + "x".repeat(500)), { maxChars: 1000, maxLineChars: 40 });
    expect(long[0]!.length).toBe(40);
    expect(long[0]!.endsWith("…")).toBe(true);
    expect(keptFacts(run("FAIL one\nerror: two"), { maxChars: 1000, skip: new Set(["FAIL one"]) })).toEqual(["error: two"]);
    expect(keptFacts(run(VITEST), { maxChars: 0 })).toEqual([]);
  });
});
