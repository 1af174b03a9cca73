import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { anthropicMinCacheableTokens, cacheableLength, cacheRuleFor, ruleTtlMs } from "./cache-rules.ts";

const ref = (api: string, model: string, provider = "p") => ({ api, model, provider });

describe("cacheRuleFor", () => {
  test("Anthropic: explicit marks, 4 max, 5 min / 1 h, write premium, the seam", () => {
    const r = cacheRuleFor(ref("anthropic-messages", "claude-sonnet-4-5"));
    expect(r).toMatchObject({ family: "anthropic", mechanism: "explicit-marks", maxMarks: 4, lookbackBlocks: 20, minCacheableTokens: 1024, writePremium: true, seamMark: true });
    expect(ruleTtlMs(r, false)).toBe(300_000);
    expect(ruleTtlMs(r, true)).toBe(3_600_000);
  });
  test("the registry's promptCache lifetimes win over the defaults", () => {
    expect(cacheRuleFor(ref("anthropic-messages", "x"), { promptCache: { short: 120, long: 7200 } }).ttlMs).toEqual({ short: 120_000, long: 7_200_000 });
  });
  test("Anthropic minimum cacheable length by model", () => {
    expect(anthropicMinCacheableTokens("claude-opus-4-5-20251101")).toBe(4096);
    expect(anthropicMinCacheableTokens("claude-opus-4-1")).toBe(1024);
    expect(anthropicMinCacheableTokens("claude-opus-4-20250514")).toBe(1024);
    expect(anthropicMinCacheableTokens("claude-haiku-4-5")).toBe(4096);
    expect(anthropicMinCacheableTokens("claude-3-5-haiku-latest")).toBe(2048);
    expect(anthropicMinCacheableTokens("claude-sonnet-4-5")).toBe(1024);
  });
  for (const api of ["openai-responses", "openai-codex-responses", "openai-completions", "azure-openai-responses"]) {
    test(`${api}: automatic prefix, 1024 minimum, 128 steps, no write premium unless priced, no seam`, () => {
      const r = cacheRuleFor(ref(api, "gpt-5.5"));
      expect(r).toMatchObject({ family: "openai", mechanism: "automatic-prefix", maxMarks: null, minCacheableTokens: 1024, stepTokens: 128, writePremium: false, seamMark: false });
      expect(ruleTtlMs(r, true)).toBe(24 * 3_600_000);
      expect(cacheRuleFor(ref(api, "gpt-6-sol"), { pricedWrites: true }).writePremium).toBe(true);
    });
  }
  test("Google: implicit prefix caching, no write premium; Pro models need 4096", () => {
    expect(cacheRuleFor(ref("google-generative-ai", "gemini-2.5-flash"), { pricedWrites: true })).toMatchObject({ family: "google", mechanism: "automatic-prefix", writePremium: false, minCacheableTokens: 1024, stepTokens: 1 });
    expect(cacheRuleFor(ref("google-vertex", "gemini-2.5-pro")).minCacheableTokens).toBe(4096);
  });
  test("Bedrock: explicit cache points, premium only when priced, no seam", () => {
    expect(cacheRuleFor(ref("bedrock-converse-stream", "anthropic.claude-sonnet-4-5-20250929-v1:0"), { pricedWrites: true })).toMatchObject({ family: "bedrock", mechanism: "explicit-marks", maxMarks: 4, writePremium: true, seamMark: false });
    expect(cacheRuleFor(ref("bedrock-converse-stream", "amazon.nova-pro-v1:0")).writePremium).toBe(false);
  });
});

describe("cacheableLength", () => {
  const rule = { minCacheableTokens: 1024, stepTokens: 128 };
  test("0 below the minimum, then 128-token steps", () => {
    expect(cacheableLength(1023, rule)).toBe(0);
    expect(cacheableLength(1024, rule)).toBe(1024);
    expect(cacheableLength(1151, rule)).toBe(1024);
    expect(cacheableLength(1152, rule)).toBe(1152);
    expect(cacheableLength(5000, { minCacheableTokens: 1024, stepTokens: 1 })).toBe(5000);
  });
  test("never more than the prefix, never less than the prefix minus one step, monotone", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500_000 }), fc.integer({ min: 0, max: 5000 }), (n, d) => {
        const c = cacheableLength(n, rule);
        expect(c).toBeLessThanOrEqual(n);
        if (n >= 1024) expect(n - c).toBeLessThan(128);
        expect(cacheableLength(n + d, rule)).toBeGreaterThanOrEqual(c);
      }),
    );
  });
});
