import { describe, expect, test } from "bun:test";
import { compilePattern, lineCount, lineRange, matchingSlices } from "./slices.ts";

const TEXT = ["alpha", "beta needle", "gamma", "delta", "epsilon", "zeta needle", "eta", "theta"].join("\n") + "\n";

describe("line slices", () => {
  test("lines split at \\n; a final newline starts no line; \\r stays in its line", () => {
    expect(lineCount(TEXT)).toBe(8);
    expect(lineCount("a\nb")).toBe(2);
    expect(lineCount("")).toBe(0);
    expect(lineCount("\n")).toBe(1);
    const crlf = lineRange("one\r\ntwo\r\n", 2);
    expect("error" in crlf ? crlf.error : crlf.text).toBe("two\r");
  });

  test("a range is the original's own characters, the last line's newline left out; endLine is capped", () => {
    const r = lineRange(TEXT, 2, 3);
    if ("error" in r) throw new Error(r.error);
    expect(r.text).toBe("beta needle\ngamma");
    expect(TEXT.slice(r.start, r.end)).toBe(r.text);
    const tail = lineRange(TEXT, 7, 99);
    expect("error" in tail ? tail.error : [tail.startLine, tail.endLine, tail.text]).toEqual([7, 8, "eta\ntheta"]);
  });

  test("bad ranges say what is wrong", () => {
    expect(lineRange(TEXT, 0)).toEqual({ error: "startLine must be a line number from 1 (got 0)." });
    expect(lineRange(TEXT, 9)).toEqual({ error: "startLine 9 is past the last line: the output has 8 line(s)." });
    expect(lineRange(TEXT, 5, 4)).toEqual({ error: "endLine (4) must be a line number not before startLine (5)." });
    expect(lineRange("", 1)).toEqual({ error: "the output is empty: it has no lines." });
  });

  test("matches widen by the context and merge where they touch", () => {
    const re = /needle/;
    const one = matchingSlices(TEXT, re, 1);
    expect(one.matched).toEqual([2, 6]);
    expect(one.slices.map((s) => [s.startLine, s.endLine])).toEqual([[1, 3], [5, 7]]);
    const two = matchingSlices(TEXT, re, 2);
    expect(two.slices.map((s) => [s.startLine, s.endLine])).toEqual([[1, 8]]);
    expect(matchingSlices(TEXT, re, 0, 3, 8).slices.map((s) => s.text)).toEqual(["zeta needle"]);
    // A global regex is used without its state (every line tested afresh).
    expect(matchingSlices(TEXT, /needle/g, 0).matched).toEqual([2, 6]);
  });

  test("patterns: a regular expression, or a clear error", () => {
    expect(compilePattern("ne+dle")).toBeInstanceOf(RegExp);
    expect(compilePattern("(unclosed")).toEqual({ error: expect.stringContaining("pattern is not a valid regular expression (JavaScript syntax)") });
    expect(compilePattern("")).toEqual({ error: expect.stringContaining("pattern is empty") });
  });
});
