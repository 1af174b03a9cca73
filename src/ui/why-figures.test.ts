/**
 * `/keeper why`'s figures, each computed two ways: the arithmetic `--detail` prints, evaluated
 * from the operands on screen, gives the figure printed after "=", which is the gate's own
 * decision value (src/discipline/gate.ts) — every factor shown, the chance that the cache is
 * lost anyway included (it once halved every rewrite without being printed) — and the first
 * screen's sentence carries the same figures.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { appendGateDecision, emptyGateDecisionLog } from "../discipline/gate-log.ts";
import { priceFlush, type GateInput } from "../discipline/gate.ts";
import type { GateDecision } from "../discipline/schema.ts";
import { formatWhyDetail, formatWhyView } from "./why-view.ts";

const num = (s: string): number => Number(s.replace(/,/g, "").replace("%", ""));

interface Printed {
  rewrite: { rewritten: number; write: number; read: number; chance: number; result: number };
  saving: { removed: number; now: number; later: number; perLater: number; relief: number; result: number };
}

/** The two arithmetic lines of `--detail`, read back from the screen. */
function readArithmetic(text: string): Printed {
  const r = text.match(/rewrite = ([\d,]+) re-written tokens × \(write ([\d.]+) − read ([\d.]+)\) × \(1 − ([\d.]+)% chance the cache is lost anyway\) = ([\d,]+)/);
  const s = text.match(/saving = ([\d,]+) removed tokens × \(this request ([\d.]+) \+ (-?[\d.]+) later requests × ([\d.]+)\) \+ relief ([\d,]+) = ([\d,]+)/);
  if (!r || !s) throw new Error(`no arithmetic in:\n${text}`);
  return {
    rewrite: { rewritten: num(r[1]!), write: num(r[2]!), read: num(r[3]!), chance: num(r[4]!) / 100, result: num(r[5]!) },
    saving: { removed: num(s[1]!), now: num(s[2]!), later: num(s[3]!), perLater: num(s[4]!), relief: num(s[5]!), result: num(s[6]!) },
  };
}

/** Operands are printed rounded (integers, 3–4 decimals, 0.1%): the sum agrees within that rounding. */
const close = (computed: number, printed: number, scale: number) => expect(Math.abs(computed - printed)).toBeLessThanOrEqual(1 + scale * 0.002);

function logOf(decision: GateDecision) {
  return appendGateDecision(emptyGateDecisionLog(), { at: 0, label: "flush 4 (request-end)", mutationIds: ["stub:a"], position: 7, decision });
}

function checkScreens(decision: GateDecision): void {
  const n = decision.numbers;
  const detail = formatWhyDetail(logOf(decision));
  const p = readArithmetic(detail);
  // Way 1: the arithmetic on screen, evaluated.
  const rewrite = p.rewrite.rewritten * (p.rewrite.write - p.rewrite.read) * (1 - p.rewrite.chance);
  const saving = p.saving.removed * (p.saving.now + p.saving.later * p.saving.perLater) + p.saving.relief;
  close(rewrite, p.rewrite.result, p.rewrite.rewritten * Math.max(1, p.rewrite.write));
  close(saving, p.saving.result, p.saving.removed * Math.max(1, p.saving.later) * Math.max(1, p.rewrite.write) + p.saving.relief);
  // Way 2: the gate's own values, which decided.
  expect(p.rewrite.result).toBe(Math.round(n.rewriteCost));
  expect(p.saving.result).toBe(Math.round(n.saving));
  // The verdict follows from the two figures shown.
  if (decision.reason === "pays" || decision.reason === "defers") expect(detail).toContain(decision.apply ? `saving ≈ ${p.saving.result.toLocaleString("en-US")} > rewrite` : `saving ≈ ${p.saving.result.toLocaleString("en-US")} ≤ rewrite`);
  // The first screen names the same figures.
  const first = formatWhyView(logOf(decision));
  if (decision.reason === "pays" || decision.reason === "defers") {
    expect(first).toContain(`the price of ≈ ${p.saving.result.toLocaleString("en-US")} input tokens`);
    expect(first).toContain(`costs (≈ ${p.rewrite.result.toLocaleString("en-US")}`);
  }
}

describe("/keeper why: the arithmetic on screen gives the figure on screen", () => {
  test("the case the issue saw: 9,623 cached tokens × (1.25 − 0.10) is 11,066, but a 50% chance of a lost cache makes it 5,533 — and the screen says so", () => {
    const decision = priceFlush({ tokensRemoved: 4_000, rewrittenTokens: 9_623, expectedRequests: 3, coldChance: 0.5, futureColdChance: 0.1 });
    expect(Math.round(decision.numbers.rewriteCost)).toBe(5_533);
    const detail = formatWhyDetail(logOf(decision));
    expect(detail).toContain("rewrite = 9,623 re-written tokens × (write 1.250 − read 0.100) × (1 − 50.0% chance the cache is lost anyway) = 5,533");
    expect(formatWhyView(logOf(decision))).toContain("(≈ 5,533, counting a 50.0% chance the cache is lost anyway)");
    checkScreens(decision);
  });

  test("property: any decision the gate can make, on any provider's prices, warm or cold, near the window or not", () => {
    const pricing = fc.record({ uncached: fc.constant(1), read: fc.double({ min: 0.05, max: 0.5, noNaN: true }), write5m: fc.double({ min: 1, max: 2, noNaN: true }), write1h: fc.double({ min: 1, max: 2.5, noNaN: true }), output: fc.constant(5) });
    const input = fc.record({
      tokensRemoved: fc.integer({ min: 1, max: 80_000 }),
      rewrittenTokens: fc.integer({ min: 0, max: 250_000 }),
      expectedRequests: fc.double({ min: 1, max: 30, noNaN: true }),
      cacheCold: fc.boolean(),
      coldChance: fc.double({ min: 0, max: 1, noNaN: true }),
      futureColdChance: fc.double({ min: 0, max: 0.5, noNaN: true }),
      ttl: fc.constantFrom<"5m" | "1h">("5m", "1h"),
      pricing,
      context: fc.record({ tokens: fc.integer({ min: 0, max: 200_000 }), window: fc.constant(200_000) }),
    });
    fc.assert(fc.property(input, (i) => checkScreens(priceFlush(i as GateInput))), { numRuns: 300 });
  });
});
