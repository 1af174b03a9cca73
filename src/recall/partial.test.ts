import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Compile } from "typebox/compile";
import type { CapturedCall } from "../summarize/batch.ts";
import type { ContextMessage } from "../session/messages.ts";
import { result } from "../../test/support/message-factory.ts";
import { emptyRecallIndex, recordOriginals, type RecallIndex } from "./recall-index.ts";
import { partOf } from "./partial.ts";
import { executeRecall, recallParameters, type RecallParams } from "./tool.ts";

const ORIGINAL = [
  "src/cache.ts(12,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
  ...Array.from({ length: 40 }, (_, i) => `  const entry${i} = lookup(${i}); // ✓ 数据`),
  "src/cache.ts(58,3): error TS2532: Object is possibly 'undefined'.",
  "Found 2 errors in 1 file.",
].join("\n") + "\n";

function setup(text: string): { store: RecallIndex; branch: ContextMessage[] } {
  const call: CapturedCall = { occurrenceKey: "tc@10#0", toolCallId: "tc", toolName: "bash", arguments: {}, resultText: text, isError: true, assistantTimestamp: 10, resultTimestamp: 11 };
  const { index } = recordOriginals(emptyRecallIndex(), { calls: [call] });
  return { store: index, branch: [result("tc", "bash", text, 11)] };
}

const recall = (params: RecallParams, text = ORIGINAL) => {
  const { store, branch } = setup(text);
  return executeRecall({ params: { ref: "tc@10#0", ...params }, store, branchMessages: branch });
};

/** Every slice the answer says it holds is the original's own characters, at the place it says. */
function expectExactSlices(answer: Awaited<ReturnType<typeof recall>>, original: string): void {
  for (const s of answer.details.slices ?? []) {
    const shown = answer.text.slice(s.bodyStart, s.bodyStart + (s.end - s.start));
    expect(shown).toBe(original.slice(s.start, s.end));
  }
}

describe("keeper_recall: part of an output", () => {
  test("a line range: the header says which lines, the body is those lines verbatim", async () => {
    const r = await recall({ startLine: 2, endLine: 4 });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(`[keeper_recall ref=tc@10#0 tool=bash] lines 2-4 of 43 (chars ${r.details.slices![0]!.start}-${r.details.slices![0]!.end} of ${ORIGINAL.length})\n  const entry0 = lookup(0); // ✓ 数据\n  const entry1 = lookup(1); // ✓ 数据\n  const entry2 = lookup(2); // ✓ 数据`);
    expect(r.details.totalLines).toBe(43);
    expectExactSlices(r, ORIGINAL);
  });

  test("a pattern: matching lines with two lines of context, merged groups, a count", async () => {
    const r = await recall({ pattern: "error TS\\d+" });
    expect(r.isError).toBe(false);
    expect(r.details.matches).toBe(2);
    expect(r.details.slices!.map((s) => [s.startLine, s.endLine])).toEqual([[1, 3], [40, 43]]);
    expect(r.text.split("\n")[0]).toBe("[keeper_recall ref=tc@10#0 tool=bash] 2 line(s) match /error TS\\d+/ of 43 lines, 2 line(s) of context");
    expect(r.text).toContain("@@ lines 1-3 @@\nsrc/cache.ts(12,7): error TS2345");
    expectExactSlices(r, ORIGINAL);
    const tight = partOf(ORIGINAL, { pattern: "TS2532", context: 0 }, 20_000, () => 0);
    expect("error" in tight ? tight.error : tight.body.split("\n")).toEqual(["@@ lines 42-42 @@", "src/cache.ts(58,3): error TS2532: Object is possibly 'undefined'."]);
    const within = await recall({ pattern: "error TS", startLine: 10 });
    expect(within.details.matches).toBe(1);
    expect(within.text.split("\n")[0]).toContain("within lines 10-43");
  });

  test("no match is an answer, not an error, and says how to get the whole output", async () => {
    const r = await recall({ pattern: "zzq" });
    expect(r.isError).toBe(false);
    expect(r.details.matches).toBe(0);
    expect(r.text).toBe("[keeper_recall ref=tc@10#0 tool=bash] no line matches /zzq/ of 43 lines; recall without pattern for the whole output\n");
  });

  test("a part larger than the page stops at a line end and says where to go on", async () => {
    const r = await recall({ startLine: 1, limit: 300 });
    const s = r.details.slices![0]!;
    expect(s.end - s.start).toBeLessThanOrEqual(300);
    expect(r.text.split("\n")[0]).toContain(`page full: next startLine ${s.endLine + 1}`);
    expectExactSlices(r, ORIGINAL);
    const many = await recall({ pattern: "entry", limit: 200 });
    expect(many.text.split("\n")[0]).toMatch(/page full: more from line \d+ \(recall with startLine=\d+ and the same pattern\)/);
    expectExactSlices(many, ORIGINAL);
  });

  test("bad input gets a clear error", async () => {
    const cases: Array<[RecallParams, string]> = [
      [{ startLine: 99 }, "startLine 99 is past the last line: the output has 43 line(s)."],
      [{ startLine: 5, endLine: 2 }, "endLine (2) must be a line number not before startLine (5)."],
      [{ pattern: "(" }, "pattern is not a valid regular expression"],
      [{ pattern: "x", offset: 10 }, "offset pages the whole output: give either offset, or startLine/endLine/pattern for a part."],
    ];
    for (const [params, message] of cases) {
      const r = await recall(params);
      expect(r.isError).toBe(true);
      expect(r.details.status).toBe("invalid");
      expect(r.text).toContain(message);
    }
    expect(partOf(ORIGINAL, { pattern: "x", context: 51 }, 100, () => 0)).toEqual({ error: "context must be a whole number of lines from 0 to 50 (got 51)." });
    expect(Compile(recallParameters).Check({ ref: "x", pattern: "a", startLine: 1, endLine: 2 })).toBe(true);
    expect(Compile(recallParameters).Check({ ref: "x", startLine: 0 })).toBe(false);
  });

  test("property: any text, range and pattern: every part recall returns is the original's exact characters", async () => {
    const line = fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replace(/\n/g, ""));
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 30 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 35 }),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom("a", "[0-9]", "^$", "é|🚀", "."),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 120 }),
        async (lines, finalNewline, startLine, span, pattern, context, limit) => {
          const text = lines.join("\n") + (finalNewline ? "\n" : "");
          for (const params of [{ startLine, endLine: startLine + span, limit }, { pattern, limit }, { pattern, startLine, limit }]) {
            const r = await recall(params, text);
            if (r.isError) {
              expect(r.text).toMatch(/past the last line|output is empty/);
              continue;
            }
            expectExactSlices(r, text);
            for (const s of r.details.slices ?? []) expect(text.slice(s.start, s.end).split("\n").length).toBe(s.endLine - s.startLine + 1);
          }
          // Any context: each part's body holds the original's characters at the place it says.
          const part = partOf(text, { pattern, context }, limit, () => 0);
          if (!("error" in part)) for (const s of part.slices) expect(part.body.slice(s.bodyStart, s.bodyStart + s.end - s.start)).toBe(text.slice(s.start, s.end));
        },
      ),
      { numRuns: 300 },
    );
  });
});
