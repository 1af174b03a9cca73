import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { priceFlush } from "./gate.ts";
import { appendGateDecision, emptyGateDecisionLog, latestGateDecisions } from "./gate-log.ts";
import { estimateRequestHorizon } from "./request-horizon.ts";
import { GateDecisionLogSchema } from "./schema.ts";

const MIN = 60_000;

describe("estimateRequestHorizon", () => {
  test("three warm requests: N = 2.734375", () => {
    // gaps 60 s and 90 s, both <= 300 s: q = (2 + 1) / (2 + 2) = 0.75; F = min(30, 3) = 3;
    // warm reads 0.75 + 0.5625 + 0.421875 = 1.734375; N = 1 + 1.734375 = 2.734375.
    const h = estimateRequestHorizon({ requestTimes: [0, 60_000, 150_000], ttlMs: 5 * MIN });
    expect(h.warmGapChance).toBe(0.75);
    expect(h.lindyFuture).toBe(3);
    expect(h.expectedRequests).toBeCloseTo(2.734375, 9);
  });
  test("cold gaps shrink the horizon", () => {
    // gaps 10 min and 10 min, both > 5 min: q = 1/4; warm reads 0.25 + 0.0625 + 0.015625 = 0.328125.
    const h = estimateRequestHorizon({ requestTimes: [0, 10 * MIN, 20 * MIN], ttlMs: 5 * MIN });
    expect(h.expectedRequests).toBeCloseTo(1.328125, 9);
  });
  test("the same gaps are warm under a one-hour TTL", () => {
    const h = estimateRequestHorizon({ requestTimes: [0, 10 * MIN, 20 * MIN], ttlMs: 60 * MIN });
    expect(h.expectedRequests).toBeCloseTo(2.734375, 9);
  });
  test("the Lindy term is capped", () => {
    // 100 warm requests: q = 100/101, F = 30 -> N = 1 + q(1 - q^30)/(1 - q).
    const times = Array.from({ length: 100 }, (_, i) => i * 1000);
    const q = 100 / 101;
    const h = estimateRequestHorizon({ requestTimes: times, ttlMs: 5 * MIN });
    expect(h.lindyFuture).toBe(30);
    expect(h.expectedRequests).toBeCloseTo(1 + (q * (1 - q ** 30)) / (1 - q), 9);
    expect(h.expectedRequests).toBeLessThan(31);
  });
  test("first request: N = 1", () => {
    expect(estimateRequestHorizon({ requestTimes: [], ttlMs: 5 * MIN }).expectedRequests).toBe(1);
  });
});

describe("priceFlush", () => {
  test("worked example, warm: stubbing 8,000 tokens under a 60,000-token rewrite defers", () => {
    // rewriteCost = 60,000 × (1.25 − 0.10) = 69,000
    // saving = 8,000 × 0.10 × 2.734375 = 2,187.5 → net −66,812.5 → defer
    // break-even = 69,000 / (8,000 × 0.10) = 86.25 requests
    const d = priceFlush({ tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 2.734375 });
    expect(d.apply).toBe(false);
    expect(d.reason).toBe("defers");
    expect(d.numbers.rewriteCost).toBeCloseTo(69_000, 6);
    expect(d.numbers.saving).toBeCloseTo(2187.5, 6);
    expect(d.numbers.net).toBeCloseTo(-66_812.5, 6);
    expect(d.numbers.breakEvenRequests).toBeCloseTo(86.25, 6);
  });
  test("worked example, cold: the same flush applies", () => {
    // rewriteCost = 0 (everything is written anyway)
    // saving = 8,000 × (1.25 + 0.10 × (2.734375 − 1)) = 8,000 × 1.4234375 = 11,387.5
    const d = priceFlush({ tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 2.734375, cacheCold: true });
    expect(d).toMatchObject({ apply: true, reason: "cold-cache" });
    expect(d.numbers.rewriteCost).toBe(0);
    expect(d.numbers.saving).toBeCloseTo(11_387.5, 6);
  });
  test("a rewrite close to the tail pays on a long horizon", () => {
    // rewriteCost = 3,000 × 1.15 = 3,450; saving = 6,000 × 0.1 × 10 = 6,000; net 2,550 → apply
    const d = priceFlush({ tokensRemoved: 6000, rewrittenTokens: 3000, expectedRequests: 10 });
    expect(d).toMatchObject({ apply: true, reason: "pays" });
    expect(d.numbers.net).toBeCloseTo(2550, 6);
  });
  test("one-hour TTL writes at 2×", () => {
    // rewriteCost = 60,000 × (2 − 0.1) = 114,000
    expect(priceFlush({ tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 3, ttl: "1h" }).numbers.rewriteCost).toBeCloseTo(114_000, 6);
  });
  test("context pressure adds relief and tips a rewrite over", () => {
    // usage = 170k / 200k = 0.85; pressure = (0.85 − 0.7) / 0.3 = 0.5
    // band = 200k × 0.3 = 60k; share = 8,000 / 60,000 = 0.1333…
    // relief = 0.5 × 0.1333… × 170,000 × (1 + 1.25) = 25,500
    // rewriteCost = 20,000 × 1.15 = 23,000; read saving (N = 1) = 8,000 × 0.1 = 800
    // saving = 26,300 > 23,000 → apply; without the context it defers (800 < 23,000)
    const withPressure = priceFlush({ tokensRemoved: 8000, rewrittenTokens: 20_000, expectedRequests: 1, context: { tokens: 170_000, window: 200_000 } });
    expect(withPressure.numbers.pressure).toBeCloseTo(0.5, 9);
    expect(withPressure.numbers.relief).toBeCloseTo(25_500, 6);
    expect(withPressure.apply).toBe(true);
    expect(priceFlush({ tokensRemoved: 8000, rewrittenTokens: 20_000, expectedRequests: 1 }).apply).toBe(false);
  });
  test("no relief below the threshold", () => {
    expect(priceFlush({ tokensRemoved: 8000, rewrittenTokens: 1, expectedRequests: 1, context: { tokens: 100_000, window: 200_000 } }).numbers.relief).toBe(0);
  });
  test("nothing removed never applies", () => {
    const d = priceFlush({ tokensRemoved: 0, rewrittenTokens: 0, expectedRequests: 5, cacheCold: true });
    expect(d).toMatchObject({ apply: false, reason: "nothing-removed" });
    expect(d.numbers.breakEvenRequests).toBeNull();
  });
  test("net falls with the rewrite and rises with the removal; cold always applies when something is removed", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 50_000 }),
        fc.double({ min: 1, max: 30, noNaN: true }),
        (removed, rewritten, extra, n) => {
          const base = priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten, expectedRequests: n });
          expect(priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten + extra, expectedRequests: n }).numbers.net).toBeLessThanOrEqual(base.numbers.net);
          expect(priceFlush({ tokensRemoved: removed + extra, rewrittenTokens: rewritten, expectedRequests: n }).numbers.net).toBeGreaterThanOrEqual(base.numbers.net);
          expect(priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten, expectedRequests: n, cacheCold: true }).apply).toBe(true);
        },
      ),
    );
  });
});

describe("GateDecisionLog", () => {
  test("keeps the last `capacity` entries, round-trips through its schema, newest first on read", () => {
    let log = emptyGateDecisionLog(3);
    for (let i = 0; i < 5; i++) {
      log = appendGateDecision(log, {
        at: i,
        label: `flush ${i}`,
        mutationIds: [`m${i}`],
        position: i,
        decision: priceFlush({ tokensRemoved: 100, rewrittenTokens: 10 * i, expectedRequests: 2 }),
      });
    }
    expect(log.entries.map((e) => e.label)).toEqual(["flush 2", "flush 3", "flush 4"]);
    expect(latestGateDecisions(log, 2).map((e) => e.label)).toEqual(["flush 4", "flush 3"]);
    expect(GateDecisionLogSchema.parse(JSON.parse(JSON.stringify(log)))).toEqual(log);
  });
});
