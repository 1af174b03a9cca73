import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { fitEstimatorToUsage, fitFeatures, leastSquares, predictPrompt, requestFeatures, splitHalves, type RequestFeatures } from "./estimator-fit.ts";
import { DEFAULT_ESTIMATOR_OPTIONS } from "./token-estimator.ts";
import type { WireRequestBody } from "./wire-types.ts";

describe("least squares", () => {
  test("solves an exact system", () => {
    // y = 2 + 3x
    expect(leastSquares([[1, 0], [1, 1], [1, 2]], [2, 5, 8]).map((v) => Math.round(v * 1e9) / 1e9)).toEqual([2, 3]);
  });
});

/** Ground truth: C = 1500, 20 tokens per block, prose 3.5 chars/token, code 2.5 chars/token. */
function synthetic(n: number): Array<{ body: WireRequestBody; recordedPrompt: number }> {
  return Array.from({ length: n }, (_, i) => {
    const prose = 70 * (i + 1);
    const code = 50 * (((i * 7) % 11) + 1);
    const blocks = 2 + (i % 5);
    const body: WireRequestBody = {
      messages: [
        { role: "user", content: [{ type: "text", text: "p".repeat(prose) }, ...Array.from({ length: blocks - 2 }, () => ({ type: "text" as const, text: "" }))] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "c".repeat(code) }] },
      ],
    };
    return { body, recordedPrompt: 1500 + 20 * blocks + prose / 3.5 + code / 2.5 };
  });
}

describe("fitEstimatorToUsage", () => {
  test("recovers known constants exactly without the ridge", () => {
    const fit = fitEstimatorToUsage(synthetic(30), { ridge: 0 });
    expect(fit.fitted).toBe(true);
    expect(fit.promptOverheadTokens).toBeCloseTo(1500, 6);
    expect(fit.estimator.blockOverheadTokens).toBeCloseTo(20, 6);
    expect(fit.estimator.proseCharsPerToken).toBeCloseTo(3.5, 6);
    expect(fit.estimator.codeCharsPerToken).toBeCloseTo(2.5, 6);
    expect(fit.rmse).toBeLessThan(1e-6);
  });
  test("the default ridge moves a well-determined fit by well under 1%", () => {
    const fit = fitEstimatorToUsage(synthetic(30));
    expect(fit.promptSizeError).toBeLessThan(0.01);
    expect(Math.abs(fit.estimator.proseCharsPerToken / 3.5 - 1)).toBeLessThan(0.02);
  });
  test("too few requests: the defaults, with the reason", () => {
    const fit = fitEstimatorToUsage(synthetic(3));
    expect(fit).toMatchObject({ fitted: false, estimator: DEFAULT_ESTIMATOR_OPTIONS, promptOverheadTokens: 0 });
    expect(fit.reason).toContain("3 billed requests");
  });
  test("collinear features (every block one size): the ridge keeps the ratios near the defaults and the fit exact", () => {
    // prose and block count move together: only their sum is determined.
    const f = (k: number): RequestFeatures => ({ blocks: k, prose: 320 * k, code: 0, images: 0 });
    const features = Array.from({ length: 20 }, (_, i) => f(i + 1));
    const y = features.map((x) => 1000 + 121 * x.blocks);
    const fit = fitFeatures(features, y);
    expect(fit.fitted).toBe(true);
    expect(fit.promptSizeError).toBeLessThan(0.01);
    expect(fit.estimator.proseCharsPerToken).toBeGreaterThan(2);
    expect(fit.estimator.proseCharsPerToken).toBeLessThan(6);
  });
  test("a negative block overhead is refitted as none", () => {
    const features = Array.from({ length: 20 }, (_, i): RequestFeatures => ({ blocks: 10 + ((i * 7) % 13), prose: 1000 * (i + 1), code: 500 * (((i * 3) % 7) + 1), images: 0 }));
    const y = features.map((x) => 800 - 5 * x.blocks + x.prose / 4 + x.code / 3);
    const fit = fitFeatures(features, y);
    expect(fit.estimator.blockOverheadTokens).toBe(0);
  });
  test("little prose beside much code: the separate prose ratio is out of range, one shared ratio is fitted and said so", () => {
    // Truth: 4 chars per token for both, C = 1200; the prose share is small and the noise (±300 tokens) swamps it.
    const features = Array.from({ length: 24 }, (_, i): RequestFeatures => ({ blocks: 4 + 2 * i, prose: 300 + 40 * i + ((i * 37) % 11) * 60, code: 4000 * (i + 1), images: 0 }));
    const y = features.map((f, i) => 1200 + (f.prose + f.code) / 4 + (i % 3 === 0 ? 400 : -200));
    const fit = fitFeatures(features, y);
    expect(fit.fitted).toBe(true);
    expect(fit.reason).toMatch(/^one chars-per-token ratio for prose and code: the separate fit was out of range \(prose -\d/);
    expect(fit.estimator.proseCharsPerToken).toBe(fit.estimator.codeCharsPerToken);
    expect(Math.abs(fit.estimator.codeCharsPerToken / 4 - 1)).toBeLessThan(0.02);
    expect(fit.promptSizeError).toBeLessThan(0.03);
  });
  test("no ratio in range even when shared: refused, with both figures in the reason", () => {
    const features = Array.from({ length: 12 }, (_, i): RequestFeatures => ({ blocks: 5, prose: 100 * (i + 1), code: 200 * (i + 1), images: 0 }));
    const fit = fitFeatures(features, features.map((f) => 500 + (f.prose + f.code) / 20));
    expect(fit).toMatchObject({ fitted: false, estimator: DEFAULT_ESTIMATOR_OPTIONS });
    expect(fit.reason).toMatch(/^fitted chars per token out of range \(prose .*; .* for both\)$/);
  });
  test("the fit never predicts worse than the defaults on the data it was fitted on", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ blocks: fc.integer({ min: 1, max: 400 }), prose: fc.integer({ min: 0, max: 200_000 }), code: fc.integer({ min: 0, max: 400_000 }), images: fc.constant(0) }), { minLength: 8, maxLength: 40 }),
        fc.double({ min: 2, max: 6, noNaN: true }),
        fc.integer({ min: 0, max: 5000 }),
        (features, ratio, c) => {
          const y = features.map((x) => c + 10 * x.blocks + (x.prose + x.code) / ratio);
          const fit = fitFeatures(features, y);
          const sq = (e: typeof DEFAULT_ESTIMATOR_OPTIONS, k: number) => features.reduce((s, x, i) => s + (predictPrompt(x, e, k) - y[i]) ** 2, 0);
          if (fit.fitted) expect(sq(fit.estimator, fit.promptOverheadTokens)).toBeLessThanOrEqual(sq(DEFAULT_ESTIMATOR_OPTIONS, 0) * (1 + 1e-9) + 1e-6);
        },
      ),
    );
  });
});

test("requestFeatures: closed-cycle thinking is left out when dropped; 'messages' skips tools and system", () => {
  const body: WireRequestBody = {
    tools: [{ name: "t", description: "d" }],
    system: "sys",
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "thinking", thinking: "x".repeat(100), signature: "s" }, { type: "text", text: "ok" }] },
      { role: "user", content: "next" },
    ],
  };
  expect(requestFeatures(body, "billed").prose).toBe(3 + 2 + 100 + 2 + 4);
  expect(requestFeatures(body, "dropped").prose).toBe(3 + 2 + 2 + 4);
  expect(requestFeatures(body, "dropped", "messages")).toEqual({ blocks: 3, prose: 8, code: 0, images: 0 });
});

test("splitHalves: the first half fits, the rest scores", () => {
  expect(splitHalves([1, 2, 3, 4, 5])).toEqual({ fit: [1, 2], score: [3, 4, 5], scoreFrom: 2 });
});
