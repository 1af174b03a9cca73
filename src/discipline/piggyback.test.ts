import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { planPiggyback, type DueMutation } from "./piggyback.ts";

/** 100 cached messages of 1,000 tokens: tokens at and after q = (100 − q) × 1,000. */
const cachedTokensFrom = (q: number): number => Math.max(0, 100 - q) * 1000;
const gate = { expectedRequests: 10 };
const m = (id: string, position: number, tokensRemoved: number, forced = false): DueMutation => ({ id, kind: "stub", position, tokensRemoved, forced });

describe("planPiggyback", () => {
  test("riders go free, an earlier mutation that pays joins, one that does not waits", () => {
    // p = 90 (forced). 95 rides along.
    // start 85: removed 4,000; rewritten = 15,000 − 10,000 − 4,000 = 1,000 → cost 1,150; saving 4,000 × 0.1 × 10 = 4,000 → net 2,850
    // start 40: removed 7,000; rewritten = 60,000 − 10,000 − 7,000 = 43,000 → cost 49,450; saving 7,000 → net −42,450
    const plan = planPiggyback({
      due: [m("early", 40, 3000), m("near", 85, 4000), m("forced", 90, 2000, true), m("late", 95, 500)],
      cachedTokensFrom,
      gate,
    });
    expect(plan.forcedFrom).toBe(90);
    expect(plan.roles).toEqual({ early: "deferred", near: "pays-alone", forced: "forced", late: "rides-along" });
    expect(plan.firstChange).toBe(85);
    expect(plan.chosen?.decision.numbers.net).toBeCloseTo(2850, 6);
    const at40 = plan.priced.find((p) => p.position === 40)!;
    expect(at40.decision.numbers.net).toBeCloseTo(-42_450, 6);
    expect(at40.mutationIds).toEqual(["early", "near"]);
  });
  test("nothing forced and nothing pays: everything waits", () => {
    // start 40: rewritten 60,000 − 3,000 = 57,000 → cost 65,550 vs saving 3,000
    const plan = planPiggyback({ due: [m("a", 40, 3000)], cachedTokensFrom, gate });
    expect(plan.apply).toEqual([]);
    expect(plan.firstChange).toBeUndefined();
    expect(plan.roles.a).toBe("deferred");
  });
  test("nothing forced, a mutation near the tail pays on its own", () => {
    // start 98: rewritten 2,000 − 900 = 1,100 → cost 1,265; saving 900 × 0.1 × 20 = 1,800 → apply
    const plan = planPiggyback({ due: [m("tail", 98, 900), m("old", 10, 500)], cachedTokensFrom, gate: { expectedRequests: 20 } });
    expect(plan.roles).toEqual({ tail: "pays-alone", old: "deferred" });
  });
  test("forcedIds force as well as the flag", () => {
    const plan = planPiggyback({ due: [m("a", 50, 100), m("b", 60, 100)], forcedIds: ["a"], cachedTokensFrom, gate });
    expect(plan.roles).toEqual({ a: "forced", b: "rides-along" });
  });
  test("cold cache: everything waiting goes", () => {
    const plan = planPiggyback({ due: [m("a", 5, 100), m("b", 60, 100), m("c", 90, 100)], cachedTokensFrom, gate: { ...gate, cacheCold: true } });
    expect(plan.apply.map((x) => x.id).sort()).toEqual(["a", "b", "c"]);
    expect(plan.firstChange).toBe(5);
  });
  test("the applied set is upward closed and contains everything at or after the forced position", () => {
    const arb = fc.array(
      fc.record({ position: fc.integer({ min: 0, max: 99 }), tokensRemoved: fc.integer({ min: 0, max: 5000 }), forced: fc.boolean() }),
      { maxLength: 20 },
    );
    fc.assert(
      fc.property(arb, fc.double({ min: 1, max: 30, noNaN: true }), (rows, n) => {
        const due = rows.map((r, i) => m(`m${i}`, r.position, r.tokensRemoved, r.forced));
        const plan = planPiggyback({ due, cachedTokensFrom, gate: { expectedRequests: n } });
        const applied = new Set(plan.apply.map((x) => x.id));
        expect(plan.apply.length + plan.defer.length).toBe(due.length);
        for (const x of due) {
          if (plan.forcedFrom !== undefined && x.position >= plan.forcedFrom) expect(applied.has(x.id)).toBe(true);
          if (plan.firstChange !== undefined && x.position >= plan.firstChange) expect(applied.has(x.id)).toBe(true);
          if (applied.has(x.id)) expect(x.position).toBeGreaterThanOrEqual(plan.firstChange!);
        }
      }),
    );
  });
});
