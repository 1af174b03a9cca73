import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { CapturedCall, ToolBatch } from "./batch.ts";
import { extractiveSummaryText } from "./extractive.ts";
import { batchFacts, countFacts, countMissing, fidelityScore, findMissingFacts } from "./fidelity.ts";
import { extractCallFacts } from "./output-facts.ts";
import { batchesOf, corpusMessages } from "../../test/support/summarize/corpus-batches.ts";

const segment = fc.stringMatching(/^[a-z][a-z0-9_-]{0,7}$/);
const ext = fc.constantFrom("ts", "js", "json", "md", "py", "rs", "go", "txt");
const path = fc
  .tuple(fc.constantFrom("", "/", "./", "../", "~/"), fc.array(segment, { minLength: 1, maxLength: 4 }), segment, ext)
  .map(([prefix, dirs, name, e]) => `${prefix}${dirs.join("/")}/${name}.${e}`);
const words = fc.array(fc.constantFrom("compiled", "module", "step", "waiting", "the", "with", "value", "cache", "ready", "42"), { minLength: 1, maxLength: 8 }).map((w) => w.join(" "));
const errorLine = fc.oneof(
  fc.tuple(path, fc.nat(999), fc.nat(99), fc.nat(9999), words).map(([p, l, c, code, w]) => `${p}(${l},${c}): error TS${code}: ${w}`),
  words.map((w) => `Error: ${w}`),
  path.map((p) => `FAIL ${p}`),
  fc.constant("Traceback (most recent call last):"),
  fc.tuple(words, fc.nat(600)).map(([w, n]) => `fatal: ${w} ${"x".repeat(n)}`), // some longer than 400 characters
);
const line = fc.oneof(
  { weight: 6, arbitrary: words },
  { weight: 2, arbitrary: path.map((p) => `  at ${p}:12:3`) },
  { weight: 2, arbitrary: errorLine },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 60 }) },
  { weight: 1, arbitrary: fc.nat(9).map((n) => `child process exit code ${n}`) },
);
const status = fc.option(
  fc.oneof(fc.integer({ min: 1, max: 255 }).map((n) => `Command exited with code ${n}`), fc.constant("Command aborted"), fc.nat(600).map((n) => `Command timed out after ${n} seconds`)),
  { nil: undefined },
);
const callArb = (lineCount: number, minLines = 0) =>
  fc.record({
    tool: fc.constantFrom("bash", "read", "grep", "edit", "custom"),
    command: fc.string({ maxLength: 300 }),
    argPath: path,
    other: fc.string({ maxLength: 400 }),
    lines: fc.array(line, { minLength: minLines, maxLength: lineCount }),
    status,
  });

function toBatch(raw: { tool: string; command: string; argPath: string; other: string; lines: string[]; status: string | undefined }[]): ToolBatch {
  const calls: CapturedCall[] = raw.map((r, i) => ({
    occurrenceKey: `id${i}@1#${i}`,
    toolCallId: `id${i}`,
    toolName: r.tool,
    arguments: r.tool === "bash" ? { command: r.command, note: r.other } : { path: r.argPath, note: r.other },
    resultText: r.lines.join("\n") + (r.status ? `\n\n${r.status}` : ""),
    isError: r.status !== undefined,
    assistantTimestamp: 1,
    resultTimestamp: 2 + i,
  }));
  return { batchKey: calls[0].occurrenceKey, assistantTimestamp: 1, calls };
}

describe("fidelity of extractive summaries", () => {
  test("property: within the caps (20 error lines, 40 paths per call) no fact is lost", () => {
    fc.assert(
      fc.property(fc.array(callArb(80), { minLength: 1, maxLength: 4 }), (raw) => {
        const batch = toBatch(raw);
        fc.pre(batch.calls.every((c) => { const f = extractCallFacts(c); return f.errorLines.length <= 20 && f.outputPaths.length <= 40; }));
        expect(findMissingFacts(batch, extractiveSummaryText(batch))).toEqual({ paths: [], commands: [], exitCodes: [], errorLines: [], images: [] });
      }),
      { numRuns: 300 },
    );
  });

  test("property: an empty summary misses every fact (the check can fail)", () => {
    fc.assert(
      fc.property(fc.array(callArb(30), { minLength: 1, maxLength: 3 }), (raw) => {
        const batch = toBatch(raw);
        expect(countMissing(findMissingFacts(batch, ""))).toBe(countFacts(batchFacts(batch)));
      }),
      { numRuns: 100 },
    );
  });

  test("measured beyond the caps: loss is only what the caps cut", () => {
    const sample = fc.sample(fc.array(callArb(400, 150), { minLength: 1, maxLength: 4 }), { numRuns: 200, seed: 7 });
    let total = 0;
    let missing = 0;
    let overCap = 0;
    for (const raw of sample) {
      const batch = toBatch(raw);
      const score = fidelityScore(batch, extractiveSummaryText(batch));
      total += score.total;
      missing += score.missing;
      for (const c of batch.calls) {
        const f = extractCallFacts(c);
        overCap += Math.max(0, f.errorLines.length - 20) + Math.max(0, f.outputPaths.length - 40);
      }
    }
    console.log(`generated (150-400 lines/call): ${total} facts, ${missing} missing, kept ${((1 - missing / total) * 100).toFixed(2)}%`);
    expect(missing).toBeLessThanOrEqual(overCap); // every lost fact is one the caps cut
    expect(total).toBeGreaterThan(10_000);
    expect(overCap).toBeGreaterThan(0); // the sample does exceed the caps
  });

  test("measured on the recorded session", () => {
    let total = 0;
    let missing = 0;
    for (const batch of batchesOf(corpusMessages())) {
      const s = fidelityScore(batch, extractiveSummaryText(batch));
      total += s.total;
      missing += s.missing;
    }
    console.log(`recorded session: ${total} facts, ${missing} missing, kept ${((1 - missing / total) * 100).toFixed(2)}%`);
    // At this writing: 831 facts, 23 missing (error lines of long tsc/npm logs past the cap of 20).
    expect(missing / total).toBeLessThan(0.05);
  });
});
