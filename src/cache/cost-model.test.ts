import { describe, expect, test } from "bun:test";
import { cacheFactsFor, costModelFor, costModelForPiModel, describeCostModel, dollarsOf, FALLBACK_PRICES, pricingOf, ratesAt, resolvePrices } from "./cost-model.ts";
import { cacheRuleFor } from "./cache-rules.ts";

const sonnet = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const gpt55 = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0, tiers: [{ inputTokensAbove: 272_000, input: 10, output: 45, cacheRead: 1, cacheWrite: 0 }] };
const zero = { uncached: 0, write5m: 0, write1h: 0, read: 0, output: 0 };

describe("pricingOf", () => {
  test("Anthropic: the registry's ratios (1.25× write, 0.1× read, 5× output), 1 h write 2×", () => {
    expect(pricingOf(sonnet, cacheRuleFor({ provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" }))).toEqual({ uncached: 1, write5m: 1.25, write1h: 2, read: 0.1, output: 5 });
  });
  test("OpenAI without a write price: a write costs plain input", () => {
    const p = pricingOf(gpt55, cacheRuleFor({ provider: "openai-codex", api: "openai-codex-responses", model: "gpt-5.5" }));
    expect(p).toEqual({ uncached: 1, write5m: 1, write1h: 1, read: 0.1, output: 6 });
  });
  test("a model without a cache-read price reads at full input", () => {
    expect(pricingOf({ input: 30, output: 60, cacheRead: 0, cacheWrite: 0 }, cacheRuleFor({ provider: "openai", api: "openai-responses", model: "gpt-4" })).read).toBe(1);
  });
});

describe("resolvePrices", () => {
  const ref = { provider: "anthropic", api: "anthropic-messages", model: "claude-opus-9" };
  test("registry first", () => {
    expect(resolvePrices(ref, sonnet)).toEqual({ rates: sonnet, source: "registry" });
  });
  test("fallback for an unpriced model (absent, or a row of zeros)", () => {
    for (const cost of [undefined, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }]) {
      const p = resolvePrices(ref, cost);
      expect(p.source).toBe("fallback");
      expect(p.fallback).toBe("Claude Opus (Anthropic)");
    }
    expect(resolvePrices({ provider: "x", api: "openai-completions", model: "local-llama" }, undefined).fallback).toBe("GPT-5 (OpenAI)");
    expect(resolvePrices({ provider: "x", api: "weird", model: "m" }, undefined).fallback).toBe(FALLBACK_PRICES[FALLBACK_PRICES.length - 1].name);
  });
});

describe("dollarsOf", () => {
  test("Anthropic request: uncached, both writes, read, output at the model's rates", () => {
    const m = costModelFor({ ref: { provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" }, registryCost: sonnet });
    // 1000×3 + 2000×3.75 + 1000×6 + 10000×0.3 + 500×15 = 3000+7500+6000+3000+7500 = 27000 per M
    expect(dollarsOf({ uncached: 1000, write5m: 2000, write1h: 1000, read: 10_000, output: 500 }, m)).toBeCloseTo(0.027, 10);
  });
  test("OpenAI: the tier by prompt size; writes (none reported) would cost input", () => {
    const m = costModelFor({ ref: { provider: "openai", api: "openai-responses", model: "gpt-5.5" }, registryCost: gpt55 });
    expect(dollarsOf({ ...zero, uncached: 100_000, read: 100_000 }, m)).toBeCloseTo((100_000 * 5 + 100_000 * 0.5) / 1e6, 10);
    expect(dollarsOf({ ...zero, uncached: 100_000, read: 200_000 }, m)).toBeCloseTo((100_000 * 10 + 200_000 * 1) / 1e6, 10);
    expect(dollarsOf({ ...zero, write5m: 1000 }, m)).toBeCloseTo(1000 * 5 / 1e6, 12);
  });
  test("ratesAt picks the highest tier below the prompt size", () => {
    expect(ratesAt(gpt55, 272_000).input).toBe(5);
    expect(ratesAt(gpt55, 272_001).input).toBe(10);
  });
});

test("describeCostModel names the rule, the ratios and the price source", () => {
  const m = costModelFor({ ref: { provider: "openai-codex", api: "openai-codex-responses", model: "gpt-5.5" }, registryCost: gpt55 });
  expect(describeCostModel(m)).toContain("no write premium");
  expect(describeCostModel(m)).toContain("read 0.10×");
  expect(describeCostModel(m)).toContain("pi-ai registry");
});

test("costModelForPiModel reads a pi-ai Model's provider, api, id, cost and promptCache", () => {
  const m = costModelForPiModel({ provider: "anthropic", api: "anthropic-messages", id: "claude-opus-4-5", cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 }, promptCache: { short: 300, long: 3600 } });
  expect(m.prices.source).toBe("registry");
  expect(m.rule.minCacheableTokens).toBe(4096);
  expect(m.pricing).toEqual({ uncached: 1, write5m: 1.25, write1h: 2, read: 0.1, output: 5 });
});

test("cacheFactsFor: the rule's lifetime and the gate's TTL tier", () => {
  const gpt = { provider: "openai", api: "openai-responses", id: "gpt-5.5", cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 } };
  expect(cacheFactsFor(gpt, false)).toMatchObject({ ttlMs: 600_000, ttl: "5m" });
  expect(cacheFactsFor(gpt, true)).toMatchObject({ ttlMs: 86_400_000, ttl: "1h" });
  const claude = { provider: "anthropic", api: "anthropic-messages", id: "claude-sonnet-4-5", promptCache: { short: 300, long: 3600 } };
  expect(cacheFactsFor(claude, false)).toMatchObject({ ttlMs: 300_000, ttl: "5m" });
  expect(cacheFactsFor(claude, true).costModel.prices.source).toBe("fallback");
});
