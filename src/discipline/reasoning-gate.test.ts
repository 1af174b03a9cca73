/**
 * The gate's reasoning term (reasoning-cost.ts) through `priceFlush` and `planPiggyback`: a
 * separate cost, charged only where reasoning is bound to its prefix, on a cold cache too.
 */
import { describe, expect, test } from "bun:test";
import { priceFlush } from "./gate.ts";
import { planPiggyback, type DueMutation } from "./piggyback.ts";

const base = { tokensRemoved: 10_000, rewrittenTokens: 20_000, expectedRequests: 10 };

describe("the gate's reasoning term", () => {
  test("absent: no figure, the decision as before", () => {
    const d = priceFlush(base);
    expect(d.numbers.reasoningDropped).toBeUndefined();
    expect(d.numbers.reasoningCost).toBeUndefined();
    // saving 10,000 × 0.1 × 10 = 10,000; rewrite 20,000 × 1.15 = 23,000
    expect(d.numbers.net).toBeCloseTo(10_000 - 23_000, 6);
  });

  test("dropped thinking costs the output price (5× on the default prices), and counts in the break-even", () => {
    const cheap = priceFlush({ ...base, rewrittenTokens: 1_000, reasoningDropped: 0 });
    const dear = priceFlush({ ...base, rewrittenTokens: 1_000, reasoningDropped: 1_500 });
    expect(cheap.apply).toBe(true);
    expect(dear.numbers.reasoningCost).toBe(7_500);
    expect(dear.numbers.net).toBeCloseTo(cheap.numbers.net - 7_500, 6);
    expect(dear.numbers.breakEvenRequests).toBeCloseTo((1_150 + 7_500) / 1_000, 6);
    // 10,000 − 1,150 − 7,500 = 1,350 > 0 still pays; 2,000 dropped does not.
    expect(dear.apply).toBe(true);
    expect(priceFlush({ ...base, rewrittenTokens: 1_000, reasoningDropped: 2_000 }).apply).toBe(false);
  });

  test("a cold cache makes the rewrite free, not the reasoning", () => {
    const d = priceFlush({ ...base, cacheCold: true, reasoningDropped: 10_000 });
    expect(d.reason).toBe("cold-cache");
    expect(d.numbers.rewriteCost).toBe(0);
    expect(d.numbers.reasoningCost).toBe(50_000);
    expect(d.apply).toBe(false);
  });

  test("piggybacking: a start earlier than the forced one pays only for the reasoning between the two", () => {
    const m = (id: string, position: number, tokensRemoved: number, forced = false): DueMutation => ({ id, kind: "stub", position, tokensRemoved, forced });
    const cachedTokensFrom = (q: number): number => Math.max(0, 100 - q) * 1000;
    // 50 thinking tokens in every message: a change at q drops (99 − q) × 50.
    const droppedAfter = (q: number): number => Math.max(0, 99 - q) * 50;
    const plan = planPiggyback({ due: [m("near", 85, 4000), m("forced", 90, 2000, true)], cachedTokensFrom, gate: { expectedRequests: 10 }, reasoningDroppedAfter: droppedAfter });
    const at85 = plan.priced.find((p) => p.position === 85)!;
    expect(at85.decision.numbers.reasoningDropped).toBe(5 * 50);
    // without the term it joined (net 2,850); 250 tokens × 5 = 1,250 less still pays
    expect(at85.decision.numbers.net).toBeCloseTo(2850 - 1250, 6);
    expect(plan.roles.near).toBe("pays-alone");
    // nothing forced: charged everything after the start
    const alone = planPiggyback({ due: [m("tail", 98, 900)], cachedTokensFrom, gate: { expectedRequests: 20 }, reasoningDroppedAfter: droppedAfter });
    expect(alone.priced[0]!.decision.numbers.reasoningDropped).toBe(50);
  });
});
