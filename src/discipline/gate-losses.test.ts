/** The gate with unannounced cache losses priced in (coldChance, futureColdChance): figures by hand. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { priceFlush } from "./gate.ts";

describe("priceFlush with observed losses", () => {
  test("a coin-flip loss on this request halves the rewrite but still defers a deep rewrite", () => {
    // p = 0.5 now, p' = 0.1 later, N = 2.734375, removed 8,000, rewritten 60,000 (5-minute TTL)
    // rewriteCost = (1 − 0.5) × 60,000 × (1.25 − 0.10) = 34,500
    // per-token value now   = 0.5 × 1.25 + 0.5 × 0.10 = 0.675
    // per-token value later = 0.1 × 1.25 + 0.9 × 0.10 = 0.215, for N − 1 = 1.734375 requests → 0.372890625
    // saving = 8,000 × (0.675 + 0.372890625) = 8,383.125; net = −26,116.875 → defers
    const d = priceFlush({ tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 2.734375, coldChance: 0.5, futureColdChance: 0.1 });
    expect(d.reason).toBe("defers");
    expect(d.numbers.rewriteCost).toBeCloseTo(34_500, 6);
    expect(d.numbers.saving).toBeCloseTo(8383.125, 6);
    expect(d.numbers.net).toBeCloseTo(-26_116.875, 6);
  });
  test("later losses make a waiting removal expensive: a tail rewrite pays more", () => {
    // p = 0, p' = 0.2, N = 10, removed 6,000, rewritten 3,000
    // rewriteCost = 3,000 × 1.15 = 3,450
    // saving = 6,000 × (0.10 + 9 × (0.2 × 1.25 + 0.8 × 0.10)) = 6,000 × (0.10 + 9 × 0.33) = 6,000 × 3.07 = 18,420
    // net = 14,970 (without losses: 6,000 × 0.1 × 10 − 3,450 = 2,550)
    const d = priceFlush({ tokensRemoved: 6000, rewrittenTokens: 3000, expectedRequests: 10, futureColdChance: 0.2 });
    expect(d).toMatchObject({ apply: true, reason: "pays" });
    expect(d.numbers.saving).toBeCloseTo(18_420, 6);
    expect(d.numbers.net).toBeCloseTo(14_970, 6);
  });
  test("a certain loss prices like a cold cache (but is reported as a decision that pays)", () => {
    // coldChance 1: rewriteCost 0; saving = 8,000 × (1.25 + 0.10 × 1.734375) = 11,387.5 — the cold worked example
    const d = priceFlush({ tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 2.734375, coldChance: 1 });
    expect(d.numbers.rewriteCost).toBe(0);
    expect(d.numbers.saving).toBeCloseTo(11_387.5, 6);
    expect(d).toMatchObject({ apply: true, reason: "pays" });
  });
  test("cacheCold wins over a smaller coldChance", () => {
    const d = priceFlush({ tokensRemoved: 100, rewrittenTokens: 1e6, expectedRequests: 1, cacheCold: true, coldChance: 0.1 });
    expect(d).toMatchObject({ apply: true, reason: "cold-cache" });
    expect(d.numbers.rewriteCost).toBe(0);
  });
  test("net never falls as either loss chance rises", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.double({ min: 1, max: 30, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (removed, rewritten, n, p, q, bump) => {
          const base = priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten, expectedRequests: n, coldChance: p, futureColdChance: q }).numbers.net;
          const p2 = Math.min(1, p + bump);
          const q2 = Math.min(1, q + bump);
          expect(priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten, expectedRequests: n, coldChance: p2, futureColdChance: q }).numbers.net).toBeGreaterThanOrEqual(base - 1e-6);
          expect(priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten, expectedRequests: n, coldChance: p, futureColdChance: q2 }).numbers.net).toBeGreaterThanOrEqual(base - 1e-6);
        },
      ),
    );
  });
});
