/** The gate priced with the session model's cost model: Anthropic's write premium, OpenAI's none. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { costModelFor } from "../cache/cost-model.ts";
import { formatWhyDetail } from "../ui/why-view.ts";
import { priceFlush } from "./gate.ts";
import { appendGateDecision, emptyGateDecisionLog } from "./gate-log.ts";
import { GateDecisionLogSchema } from "./schema.ts";

const sonnet = costModelFor({ ref: { provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" }, registryCost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
const gpt = costModelFor({ ref: { provider: "openai-codex", api: "openai-codex-responses", model: "gpt-5.5" }, registryCost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 } });
const example = { tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 2.734375 };

describe("priceFlush with a cost model", () => {
  test("Anthropic's registry prices give the default arithmetic", () => {
    expect(priceFlush({ ...example, costModel: sonnet }).numbers).toMatchObject({ ...priceFlush(example).numbers, cacheRule: sonnet.rule.label, writePremium: true });
  });
  test("OpenAI, warm: the rewrite costs 60,000 × (1 − 0.1) = 54,000, breaks even after 67.5 requests", () => {
    const d = priceFlush({ ...example, costModel: gpt });
    expect(d.numbers.writePrice).toBe(1);
    expect(d.numbers.readPrice).toBe(0.1);
    expect(d.numbers.rewriteCost).toBeCloseTo(54_000, 6);
    expect(d.numbers.breakEvenRequests).toBeCloseTo(67.5, 6);
    expect(d.numbers.writePremium).toBe(false);
    expect(d.apply).toBe(false);
  });
  test("OpenAI, cold: the removed tokens save their uncached price, not a write: 8,000 × (1 + 0.1 × 1.734375)", () => {
    const d = priceFlush({ ...example, cacheCold: true, costModel: gpt });
    expect(d.numbers.saving).toBeCloseTo(9387.5, 6);
    expect(d.apply).toBe(true);
  });
  test("a rewrite that pays on OpenAI may not pay on Anthropic, never the reverse (same read ratio)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50_000 }), fc.integer({ min: 0, max: 200_000 }), fc.double({ min: 1, max: 40, noNaN: true }), fc.boolean(), (removed, rewritten, n, cold) => {
        const a = priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten, expectedRequests: n, cacheCold: cold, costModel: sonnet });
        const o = priceFlush({ tokensRemoved: removed, rewrittenTokens: rewritten, expectedRequests: n, cacheCold: cold, costModel: gpt });
        if (!cold) {
          expect(o.numbers.rewriteCost).toBeLessThanOrEqual(a.numbers.rewriteCost);
          if (a.apply) expect(o.apply).toBe(true);
        }
      }),
    );
  });
});

test("/keeper why names the rule and says re-written tokens cost plain input; the log round-trips", () => {
  const log = appendGateDecision(emptyGateDecisionLog(5), { at: 0, label: "flush 1", mutationIds: ["m1"], position: 3, decision: priceFlush({ ...example, costModel: gpt }) });
  expect(GateDecisionLogSchema.parse(JSON.parse(JSON.stringify(log)))).toEqual(log);
  const text = formatWhyDetail(log);
  expect(text).toContain("× (write 1.000 − read 0.100)");
  expect(text).toContain("priced as OpenAI: automatic prefix caching");
  expect(text).toContain("(re-written tokens cost plain input)");
});
