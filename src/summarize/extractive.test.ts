import { describe, expect, test } from "bun:test";
import type { CapturedCall, ToolBatch } from "./batch.ts";
import { extractiveSummaryText, rawLength, summarizeExtractively } from "./extractive.ts";
import { findMissingFacts } from "./fidelity.ts";
import { batchesOf, corpusMessages } from "../../test/support/summarize/corpus-batches.ts";

function call(toolName: string, args: Record<string, unknown>, resultText: string, isError = false, i = 0): CapturedCall {
  return { occurrenceKey: `t${i}@100#${i}`, toolCallId: `t${i}`, toolName, arguments: args, resultText, isError, assistantTimestamp: 100, resultTimestamp: 101 + i };
}
function batch(...calls: CapturedCall[]): ToolBatch {
  return { batchKey: calls[0].occurrenceKey, assistantTimestamp: 100, calls };
}

describe("extractive summary", () => {
  const longCommand = `cd /work/repo && ${"echo segment && ".repeat(40)}npm test -- --reporter=dot`;
  const bigOutput = [
    "> repo@1.0.0 test",
    ...Array.from({ length: 5000 }, (_, i) => `ok ${i} - case ${i} in test/case-${i % 7}.test.ts`),
    "src/parser.ts(12,3): error TS2322: Type 'string' is not assignable to type 'number'.",
    "last useful line",
    "",
    "Command exited with code 2",
  ].join("\n");
  const b = batch(call("bash", { command: longCommand, timeout: 600, env: "x".repeat(500) }, bigOutput, true));
  const text = extractiveSummaryText(b);

  test("keeps the tool name, the whole command, the exit code and counts", () => {
    expect(text).toContain("[1] bash");
    expect(text).toContain(`command: ${longCommand}`); // never cut, though > 160 chars
    expect(text).toContain("status: exit code 2");
    // 5000 ok lines + header + error + last line + blank + status = 5005 lines
    expect(text).toContain("5005 lines");
    expect(text).toContain(`${Buffer.byteLength(bigOutput, "utf8")} bytes`);
  });
  test("cuts long non-command arguments with an ellipsis", () => {
    expect(text).toContain(`env: ${"x".repeat(159)}…`);
    expect(text).not.toContain("x".repeat(161));
  });
  test("keeps the error line and the output paths, not samples of a long output", () => {
    expect(text).not.toContain("> repo@1.0.0 test");
    expect(text).not.toContain("last useful line");
    expect(text).toContain("src/parser.ts(12,3): error TS2322");
    for (let k = 0; k < 7; k++) expect(text).toContain(`test/case-${k}.test.ts`);
    expect(findMissingFacts(b, text)).toEqual({ paths: [], commands: [], exitCodes: [], errorLines: [], images: [] });
  });
  test("is much shorter than a big output", () => {
    const s = summarizeExtractively(b);
    expect(s.source).toBe("extractive");
    expect(s.text.length * 100).toBeLessThan(rawLength(b)); // raw is ~220 kB, the summary ~1 kB
  });
  test("keeps raw (empty text) when the summary would be longer than the output", () => {
    const tiny = batch(call("read", { path: "/a/very/long/path/to/some/file/that/is/long.ts" }, "x"));
    const s = summarizeExtractively(tiny);
    expect(s.source).toBe("raw");
    expect(s.text).toBe("");
    expect(s.cost).toBe(0);
  });
  test("paths in arguments are never cut, even under other keys", () => {
    const p = `/deep/${"dir/".repeat(80)}file.ts`;
    const t = extractiveSummaryText(batch(call("custom", { target: p, files: [p] }, "done")));
    expect(t).toContain(`target: ${p}`);
  });
  test("deterministic and keeps unicode lines intact", () => {
    const out = "héllo wörld 🚀\n".repeat(50) + "错误: failed to open 数据/文件.txt\n";
    const b2 = batch(call("bash", { command: "cat 数据/文件.txt" }, out));
    expect(extractiveSummaryText(b2)).toBe(extractiveSummaryText(b2));
    expect(extractiveSummaryText(b2)).toContain("错误: failed to open 数据/文件.txt");
    expect(extractiveSummaryText(b2)).toContain("cat 数据/文件.txt");
  });
  test("a timeout with the shell's exit code states both", () => {
    const out = "partial\n\nCommand timed out after 5 seconds. The shell exited with code 0 after 1.2 seconds, but background processes it started kept writing output until the timeout.";
    const t = extractiveSummaryText(batch(call("bash", { command: "npm run dev &" }, out, true)));
    expect(t).toContain("status: timed out after 5 s (shell exited with code 0)");
  });
  test("a short output is kept whole; error lines beyond the first 20 are counted, not listed", () => {
    const short = extractiveSummaryText(batch(call("bash", { command: "ls" }, "a.txt\nb.txt\n\nCommand exited with code 0")));
    expect(short).toContain("  output:\n    a.txt\n    b.txt");
    const errors = Array.from({ length: 25 }, (_, i) => `ERROR step ${i} failed`).join("\n") + "\n" + "ok\n".repeat(20);
    const t = extractiveSummaryText(batch(call("bash", { command: "make" }, errors + "\nCommand exited with code 1", true)));
    expect(t).toContain("error lines (25, 5 not shown):");
    expect(t).toContain("ERROR step 19 failed");
    expect(t).not.toContain("ERROR step 20 failed");
    expect(t).not.toContain("output:");
  });
  test("error lines already shown in the output section are not repeated", () => {
    const t = extractiveSummaryText(batch(call("bash", { command: "x" }, "Error: boom\n\nCommand exited with code 1", true)));
    expect(t.split("Error: boom").length - 1).toBe(1);
  });
});

describe("extractive summary on the recorded session", () => {
  const batches = batchesOf(corpusMessages());
  test("the corpus yields batches and the summaries shrink the big ones", () => {
    expect(batches.length).toBeGreaterThan(300);
    const big = batches.filter((b) => rawLength(b) > 4000);
    expect(big.length).toBeGreaterThan(5);
    let raw = 0;
    let summary = 0;
    for (const b of big) {
      const s = summarizeExtractively(b);
      expect(s.source).toBe("extractive");
      expect(s.text.length).toBeLessThan(rawLength(b)); // an error-dense build log keeps ~half
      raw += rawLength(b);
      summary += s.text.length;
    }
    // At this writing: 8 batches, 115,123 raw characters -> 8,290 summary characters (7.2%).
    expect(summary).toBeLessThan(raw * 0.1);
  });
});

describe("extractive summary of a failed test run", () => {
  test("lists the failing tests as the runner printed them (only for a call that failed)", () => {
    const jest = ["PASS test/b.test.ts", "FAIL test/a.test.ts", "  ✕ rounds the quota (3 ms)", "  ● a › rounds the quota", "", "    Expected: 2", ...Array.from({ length: 60 }, (_, i) => `  ✓ case ${i}`), "Tests: 1 failed, 60 passed", "", "Command exited with code 1"].join("\n");
    const text = extractiveSummaryText(batch(call("bash", { command: "npx jest" }, jest, true)));
    expect(text).toContain("  failing tests (3):\n    FAIL test/a.test.ts\n    ✕ rounds the quota (3 ms)\n    ● a › rounds the quota");
    expect(extractiveSummaryText(batch(call("read", { path: "notes.md" }, jest.replace("Command exited with code 1", ""), false)))).not.toContain("failing tests");
  });
});

