import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { sizeModelSummarizer, sizeModelSummaryTokens } from "../report/replay-summaries.ts";
import type { ToolBatch } from "./batch.ts";
import { chooseSummarySource, chooseSummarySourceForBatch, DEFAULT_PROMPT_OVERHEAD_TOKENS } from "./summary-choice.ts";
import { SUMMARY_SYSTEM_PROMPT } from "./summary-prompt.ts";
import { estimateSummaryTokens, summaryCallSize } from "./summary-size.ts";

describe("estimateSummaryTokens: S = min(R, round(120 + 0.04 R))", () => {
  test("hand-computed sizes", () => {
    expect(estimateSummaryTokens(1000)).toBe(160); // 120 + 40
    expect(estimateSummaryTokens(10_000)).toBe(520); // 120 + 400
    expect(estimateSummaryTokens(2581)).toBe(223); // 120 + 103.24 → 223
    expect(estimateSummaryTokens(100)).toBe(100); // 124 > 100: capped at R
    expect(estimateSummaryTokens(0)).toBe(0);
  });

  test("the replay's size model is the same formula", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 200_000 }), (r) => sizeModelSummaryTokens(r) === estimateSummaryTokens(r)));
  });
});

describe("chooseSummarySource", () => {
  // R = 1000 → S = 160; P = 300.
  // C = (1000 + 300) × 1 + 160 × 5 = 2100; G = (1000 − 160) × 0.1 × N = 84 N; break-even N = 2100 / 84 = 25.
  const base = { rawTokens: 1000, promptOverheadTokens: 300 };

  test("a long warm horizon repays the call: model", () => {
    const c = chooseSummarySource({ ...base, expectedRequests: 30 });
    expect(c.source).toBe("model");
    expect(c.numbers.summaryTokens).toBe(160);
    expect(c.numbers.summarizerCost).toBe(2100);
    expect(c.numbers.pruningSaving).toBeCloseTo(2520, 9); // 84 × 30
    expect(c.numbers.breakEvenRequests).toBeCloseTo(25, 9);
    expect(c.reason).toStartWith("model:");
  });

  test("a short session does not: extractive", () => {
    const c = chooseSummarySource({ ...base, expectedRequests: 5 });
    expect(c.source).toBe("extractive");
    expect(c.numbers.pruningSaving).toBeCloseTo(420, 9); // 84 × 5 < 2100
    expect(c.reason).toStartWith("extractive:");
    expect(c.reason).toContain("the model pays from 25 requests");
  });

  test("boundary: saving equal to the cost is enough (N = 25); just below is not", () => {
    expect(chooseSummarySource({ ...base, expectedRequests: 25 }).source).toBe("model"); // 84 × 25 = 2100 = C
    expect(chooseSummarySource({ ...base, expectedRequests: 24.99 }).source).toBe("extractive"); // 2099.16 < 2100
  });

  test("big outputs pay from N ≈ 13 on", () => {
    // R = 10000 → S = 520; P = 300: C = 10300 + 2600 = 12900; per request (10000 − 520) × 0.1 = 948;
    // break-even 12900 / 948 ≈ 13.61: N = 14 saves 13272 ≥ 12900, N = 13 saves 12324 < 12900.
    const big = { rawTokens: 10_000, promptOverheadTokens: 300 };
    expect(chooseSummarySource({ ...big, expectedRequests: 14 }).source).toBe("model");
    expect(chooseSummarySource({ ...big, expectedRequests: 13 }).source).toBe("extractive");
    expect(chooseSummarySource({ ...big, expectedRequests: 13 }).numbers.breakEvenRequests).toBeCloseTo(12900 / 948, 9);
  });

  test("an output the summary would not shrink never pays, however long the session", () => {
    // R = 100 → S = min(100, 124) = 100: nothing pruned.
    const c = chooseSummarySource({ rawTokens: 100, expectedRequests: 1e6 });
    expect(c.source).toBe("extractive");
    expect(c.numbers.pruningSaving).toBe(0);
    expect(c.numbers.breakEvenRequests).toBe(Number.POSITIVE_INFINITY);
    expect(c.reason).toContain("pays from never");
  });

  test("facts every summary must keep set the kept size: K = min(R, max(S, F))", () => {
    // R = 1000, S = 160, F = 580 → K = 580: G = (1000 − 580) × 0.1 × N = 42 N; C = 2100 (S is what the model writes).
    const c = chooseSummarySource({ ...base, factTokens: 580, expectedRequests: 30 });
    expect(c.numbers.keptSummaryTokens).toBe(580);
    expect(c.numbers.summarizerCost).toBe(2100);
    expect(c.numbers.breakEvenRequests).toBeCloseTo(50, 9); // 2100 / 42
    expect(c.source).toBe("extractive"); // 42 × 30 = 1260 < 2100, where F = 0 would have paid (2520)
    // F ≥ R: the repaired summary is no shorter than the output, which stays raw: never pays.
    expect(chooseSummarySource({ ...base, factTokens: 1200, expectedRequests: 1e6 }).numbers.breakEvenRequests).toBe(Number.POSITIVE_INFINITY);
  });

  test("no prompt overhead given: the system prompt's tokens", () => {
    expect(DEFAULT_PROMPT_OVERHEAD_TOKENS).toBe(Math.ceil(SUMMARY_SYSTEM_PROMPT.length / 3.1));
    const c = chooseSummarySource({ rawTokens: 1000, expectedRequests: 30 });
    expect(c.numbers.promptOverheadTokens).toBe(DEFAULT_PROMPT_OVERHEAD_TOKENS);
    expect(c.numbers.summarizerCost).toBe(1000 + DEFAULT_PROMPT_OVERHEAD_TOKENS + 800);
  });

  test("other prices: a read at 0.5 pays five times sooner", () => {
    // per request (1000 − 160) × 0.5 = 420; C = 2100 → break-even 5.
    const pricing = { uncached: 1, read: 0.5, output: 5 };
    expect(chooseSummarySource({ ...base, expectedRequests: 5, pricing }).source).toBe("model");
    expect(chooseSummarySource({ ...base, expectedRequests: 4.9, pricing }).source).toBe("extractive");
  });

  test("no horizon (N = 0, NaN) means extractive", () => {
    expect(chooseSummarySource({ ...base, expectedRequests: 0 }).source).toBe("extractive");
    expect(chooseSummarySource({ ...base, expectedRequests: Number.NaN }).source).toBe("extractive");
  });

  test("more expected requests never turn a model choice into extractive", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 2000 }), fc.double({ min: 0, max: 40, noNaN: true }), fc.double({ min: 0, max: 40, noNaN: true }), (r, p, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const low = chooseSummarySource({ rawTokens: r, promptOverheadTokens: p, expectedRequests: lo });
        const high = chooseSummarySource({ rawTokens: r, promptOverheadTokens: p, expectedRequests: hi });
        return low.source === "extractive" || high.source === "model";
      }),
    );
  });
});

describe("chooseSummarySourceForBatch", () => {
  const output = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, "0")} of a file, twenty-one`).join("\n").slice(0, 3100);
  const batch: ToolBatch = {
    batchKey: "a@1#0",
    assistantTimestamp: 1,
    calls: [{ occurrenceKey: "a@1#0", toolCallId: "a", toolName: "read", arguments: { path: "src/a.ts" }, resultText: output, isError: false, assistantTimestamp: 1, resultTimestamp: 2 }],
  };

  test("R, P and F come from the request the summarizer would get; C is what the replay bills", () => {
    const size = summaryCallSize(batch);
    expect(size.rawTokens).toBe(1000); // 3100 / 3.1
    // The only fact of a plain read: its path, in the repair's block ("\nAlso in the output (verbatim):\npaths: src/a.ts").
    expect(size.factTokens).toBe(Math.ceil("\nAlso in the output (verbatim):\npaths: src/a.ts".length / 3.1));
    const c = chooseSummarySourceForBatch(batch, { expectedRequests: 30 });
    expect(c.numbers.rawTokens).toBe(1000);
    expect(c.numbers.promptOverheadTokens).toBe(size.promptTokens - 1000);
    // The replay's size model bills I × 1 + S × 5 with I = R + P: the same figure.
    expect(sizeModelSummarizer()(batch).billed).toBe(c.numbers.summarizerCost);
  });

  test("an output made of error lines: the kept summary is the output, so no model call", () => {
    const errors = Array.from({ length: 20 }, (_, i) => `src/m${i}.ts(${i + 1},3): error TS2345: Argument of type 'undefined' is not assignable.`).join("\n");
    const failing: ToolBatch = { ...batch, calls: [{ ...batch.calls[0], toolName: "bash", arguments: { command: "npx tsc --noEmit" }, resultText: errors, isError: true }] };
    const size = summaryCallSize(failing);
    expect(size.factTokens).toBeGreaterThanOrEqual(size.rawTokens); // every line is an error line (and a path)
    expect(chooseSummarySourceForBatch(failing, { expectedRequests: 1e6 }).source).toBe("extractive");
    // The replay's size model repairs its cut text the same way: the output stays raw.
    expect(sizeModelSummarizer()(failing).summary.source).toBe("raw");
  });
});
