import { describe, expect, test } from "bun:test";
import { extractCallFacts, findPaths, isErrorLine, parseExitStatus, summaryStatesExitFact } from "./output-facts.ts";
import type { CapturedCall } from "./batch.ts";

function bashCall(command: string, resultText: string, isError = false): CapturedCall {
  return { occurrenceKey: "c1@1#0", toolCallId: "c1", toolName: "bash", arguments: { command }, resultText, isError, assistantTimestamp: 1, resultTimestamp: 2 };
}

describe("parseExitStatus (Pi bash tool status lines)", () => {
  test("non-zero exit appended after a blank line", () => {
    expect(parseExitStatus("boom\n\nCommand exited with code 2")).toEqual({ kind: "exit", code: 2, line: "Command exited with code 2" });
  });
  test("timeout, with and without the shell's own exit", () => {
    expect(parseExitStatus("x\n\nCommand timed out after 30 seconds")).toEqual({ kind: "timeout", seconds: 30, line: "Command timed out after 30 seconds" });
    const both = "x\n\nCommand timed out after 5 seconds. The shell exited with code 0 after 1.2 seconds, but background processes it started kept writing output until the timeout.";
    expect(parseExitStatus(both)).toMatchObject({ kind: "timeout", seconds: 5, code: 0 });
  });
  test("aborted and no exit code; a success has no status line", () => {
    expect(parseExitStatus("Debugger attached.\n\n\nCommand aborted")?.kind).toBe("aborted");
    expect(parseExitStatus("Command terminated without an exit code")?.kind).toBe("no-exit-code");
    expect(parseExitStatus("all good\n")).toBeUndefined();
    expect(parseExitStatus("")).toBeUndefined();
  });
  test("a status-like line that is not last is not the status", () => {
    expect(parseExitStatus("Command exited with code 1\nmore output")).toBeUndefined();
  });
});

describe("exit facts", () => {
  test("status code plus codes mentioned in the output, deduplicated", () => {
    const f = extractCallFacts(bashCall("make", "child exit code 3\nnpm error exit status 3\n\nCommand exited with code 2", true));
    expect(f.exitFacts).toEqual([{ kind: "code", code: 2 }, { kind: "code", code: 3 }]);
  });
  test("summaryStatesExitFact needs the exact number", () => {
    const fact = { kind: "code", code: 2 } as const;
    expect(summaryStatesExitFact("the build failed (exit code 2)", fact)).toBe(true);
    expect(summaryStatesExitFact("Command exited with code 2", fact)).toBe(true);
    expect(summaryStatesExitFact("exit code 21", fact)).toBe(false);
    expect(summaryStatesExitFact("it failed", fact)).toBe(false);
  });
});

describe("error lines", () => {
  test("matches common failure shapes, not ordinary lines", () => {
    for (const l of ["src/a.ts(3,4): error TS2322: nope", "Traceback (most recent call last):", "npm ERR! code 1", "FAIL test/x.test.ts", "ls: x: No such file or directory", "Error: ENOENT: no such file", "UnhandledPromiseRejection exception"]) {
      expect(isErrorLine(l)).toBe(true);
    }
    for (const l of ["Compiled 3 files", "Edit: done", "All tests passed"]) expect(isErrorLine(l)).toBe(false);
  });
  test("a failed non-shell tool contributes its first line", () => {
    const call: CapturedCall = { ...bashCall("", ""), toolName: "edit", arguments: { path: "a.ts" }, resultText: "Could not find the exact text in a.ts.\nThe old text must match.", isError: true };
    expect(extractCallFacts(call).errorLines).toEqual(["Could not find the exact text in a.ts."]);
  });
  test("long error lines are kept as a 400-character prefix with an ellipsis", () => {
    const long = "error: " + "x".repeat(1000);
    const [line] = extractCallFacts(bashCall("x", long)).errorLines;
    expect(line.length).toBe(400); // 399 kept characters + "…"
    expect(line.endsWith("…")).toBe(true);
  });
});

describe("findPaths", () => {
  test("absolute, relative, dotted, line:col suffixes, bare source files", () => {
    const text = [
      "/Users/me/pi-mono/packages/tui/src/index.ts:12:5 - error",
      "see ./docs/theme.md, and ../up/x.json.",
      "wrap-ansi.test.ts(99,52): error TS2353",
      "packages/coding-agent/src",
      "~/notes/todo.txt",
    ].join("\n");
    expect(findPaths(text)).toEqual([
      "/Users/me/pi-mono/packages/tui/src/index.ts",
      "./docs/theme.md",
      "../up/x.json",
      "wrap-ansi.test.ts",
      "packages/coding-agent/src",
      "~/notes/todo.txt",
    ]);
  });
  test("no URLs, fractions, dates, mime types or dotted identifiers", () => {
    expect(findPaths("https://example.com/a/b.html 1/2 2025/11/20 text/html and/or console.log process.env")).toEqual([]);
  });
  test("deduplicates in order of first mention", () => {
    expect(findPaths("src/a.ts src/b.ts src/a.ts")).toEqual(["src/a.ts", "src/b.ts"]);
  });
});
