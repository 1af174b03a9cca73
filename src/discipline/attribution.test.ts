import { describe, expect, test } from "bun:test";
import type { WireMessage, WireRequestBody } from "../cache/wire-types.ts";
import fc from "fast-check";
import { digestBody, type BodyDigest } from "../cache/body-digest.ts";
import { attributeBust, emptyFingerprintLog, fingerprintLayers, fingerprintLayersWithTail, recordFingerprint, type TailHash } from "./attribution.ts";
import { formatCacheDetail } from "../ui/cache-view.ts";
import { formatWhyDetail } from "../ui/why-view.ts";
import { emptyRewriteTally, tallyRequest } from "./rewrite-tally.ts";
import { priceFlush } from "./gate.ts";
import { appendGateDecision, emptyGateDecisionLog } from "./gate-log.ts";
import { FingerprintLogSchema, RequestFingerprintSchema } from "./schema.ts";
import { a, M5, payload, res, roundEstimator, txt, u, use } from "../../test/support/discipline/builders.ts";

const MIN = 60_000;
const TTL = 5 * MIN;

/**
 * Tokens under roundEstimator: tools 1000, system 500;
 * messages m0 100, m1 10, m2 2000, m3 50 | m4 100, m5 10, m6 3000 (seam after m3).
 * Messages total 5,270.
 */
function history(stubbed = false, lastTag = "c1"): WireMessage[] {
  return [
    u(txt(100, "prompt")),
    a(use("c0")),
    u(stubbed ? res("c0-stub", 100) : res("c0", 2000)),
    a(txt(50, "answer")),
    u(txt(100, "next")),
    a(use("c1")),
    u(res(lastTag, 3000, M5)),
  ];
}
const grown = (messages: WireMessage[]): WireMessage[] => [
  ...messages.map((m) => (Array.isArray(m.content) ? { ...m, content: m.content.map(({ cache_control: _c, ...b }) => b) } : m)),
  a(txt(40, "more")),
  u(txt(20, "again", M5)),
];

const fp = (body: WireRequestBody, at: number, over: { model?: string; thinkingLevel?: string } = {}) =>
  fingerprintLayers(body, { at, model: over.model ?? "claude-sonnet-4-5", thinkingLevel: over.thinkingLevel ?? "medium", seamMessageIndex: 3, estimate: roundEstimator });

const prev = fp(payload(history()), 0);
const ctx = { ttlMs: TTL, keeperRewroteSinceLast: false };

describe("fingerprintLayers", () => {
  test("per-layer tokens and a schema round trip", () => {
    expect(prev.tokens).toEqual({ tools: 1000, system: 500, messages: [100, 10, 2000, 50, 100, 10, 3000] });
    expect(RequestFingerprintSchema.parse(JSON.parse(JSON.stringify(prev)))).toEqual(prev);
  });
  test("moving pi's last mark does not change frozen history's hash", () => {
    const next = fp(payload(grown(history())), MIN);
    expect(next.layers.frozen).toBe(prev.layers.frozen);
    expect(next.layers.tools).toBe(prev.layers.tools);
    expect(next.layers.tail).not.toBe(prev.layers.tail);
  });
  test("the fingerprint log keeps the last N", () => {
    let log = emptyFingerprintLog(2);
    for (let i = 0; i < 3; i++) log = recordFingerprint(log, { ...prev, at: i });
    expect(log.entries.map((e) => e.at)).toEqual([1, 2]);
    expect(FingerprintLogSchema.parse(log)).toEqual(log);
  });
});

describe("attributeBust", () => {
  test("a request that extends the previous one is no bust", () => {
    expect(attributeBust(prev, fp(payload(grown(history())), MIN), ctx)).toMatchObject({ cause: "none", layer: "none", estimatedCost: 0 });
  });
  test("this extension's flush rewrite of frozen history", () => {
    // first change at m2; rewritten = min(prev from m2, current from m2)
    //   prev: 2000 + 50 + 100 + 10 + 3000 = 5,160; current: 100 + 50 + 100 + 10 + 3000 + 40 + 20 = 3,320 → 3,320
    // cost = 3,320 × (1.25 − 0.1) = 3,818
    const cur = fp(payload(grown(history(true))), MIN);
    const b = attributeBust(prev, cur, { ...ctx, keeperRewroteSinceLast: true });
    expect(b).toMatchObject({ cause: "keeper-rewrite", layer: "frozen", firstChangedMessage: 2, rewrittenTokens: 3320 });
    expect(b.estimatedCost).toBeCloseTo(3818, 6);
    expect(attributeBust(prev, cur, ctx).cause).toBe("unknown");
  });
  test("a change after the seam is a tail change", () => {
    const b = attributeBust(prev, fp(payload(grown(history(false, "c1-other"))), MIN), { ...ctx, keeperRewroteSinceLast: true });
    expect(b).toMatchObject({ cause: "keeper-rewrite", layer: "tail", firstChangedMessage: 6 });
  });
  test("TTL expiry re-writes everything", () => {
    // tools 1000 + system 500 + min(5,270, 5,330) = 6,770; cost 6,770 × 1.15 = 7,785.5
    const b = attributeBust(prev, fp(payload(grown(history())), 6 * MIN), ctx);
    expect(b).toMatchObject({ cause: "ttl-expiry", rewrittenTokens: 6770 });
    expect(b.estimatedCost).toBeCloseTo(7785.5, 6);
  });
  test("model switch, thinking change, tool change, system change", () => {
    const body = payload(grown(history()));
    expect(attributeBust(prev, fp(body, MIN, { model: "claude-opus-4-5" }), ctx)).toMatchObject({ cause: "model-switch", rewrittenTokens: 6770 });
    // messages only: 5,270; cost 6,060.5
    const t = attributeBust(prev, fp(body, MIN, { thinkingLevel: "high" }), ctx);
    expect(t).toMatchObject({ cause: "thinking-change", rewrittenTokens: 5270 });
    expect(t.estimatedCost).toBeCloseTo(6060.5, 6);
    const tools = { ...body, tools: [{ name: "read", description: "changed", input_schema: {} }] };
    expect(attributeBust(prev, fp(tools, MIN), ctx)).toMatchObject({ cause: "tool-change", layer: "tools", rewrittenTokens: 6770 });
    const system = { ...body, system: [{ type: "text" as const, text: "other system" }] };
    // min(500, 3) + 5,270: the new system is 3 tokens ("other system" = 12 chars / 4)
    expect(attributeBust(prev, fp(system, MIN), ctx)).toMatchObject({ cause: "system-change", layer: "system", rewrittenTokens: 5273 });
  });
  test("1 h TTL prices writes at 2×", () => {
    // 3,320 × (2 − 0.1) = 6,308
    const b = attributeBust(prev, fp(payload(grown(history(true))), MIN), { ...ctx, ttl: "1h", keeperRewroteSinceLast: true });
    expect(b.estimatedCost).toBeCloseTo(6308, 6);
  });
});

describe("formatters", () => {
  test("/keeper cache --detail lists the layers and the rewrites with their cost", () => {
    const cur = fp(payload(grown(history(true))), MIN);
    const bust = attributeBust(prev, cur, { ...ctx, keeperRewroteSinceLast: true });
    const tally = tallyRequest(tallyRequest(emptyRewriteTally(), undefined), bust);
    const text = formatCacheDetail({ fingerprints: [prev, cur], busts: [bust], tally, sessionRewrites: 1 });
    expect(text).toContain("00:01:00 UTC");
    // frozen (stubbed): 100 + 10 + 100 + 50 = 260; tail: 100 + 10 + 3000 + 40 + 20 = 3,170
    expect(text).toContain(`frozen  ${cur.layers.frozen}  260 tokens (messages 0–3, up to the seam mark)`);
    expect(text).toContain(`tail    ${cur.layers.tail}  3,170 tokens (messages 4–8)`);
    expect(text).toContain("keeper-rewrite");
    expect(text).toContain("3,320 tokens written again ≈ 3,818");
    expect(text).toContain("this extension's 1 cost ≈ 3,818");
    expect(formatCacheDetail({ fingerprints: [], busts: [], tally: emptyRewriteTally(), sessionRewrites: 0 })).toContain("No request seen yet.");
  });
  test("/keeper why --detail shows the numbers behind each decision", () => {
    let log = emptyGateDecisionLog();
    log = appendGateDecision(log, {
      at: 2 * MIN,
      label: "flush 3",
      mutationIds: ["stub:a", "stub:b"],
      position: 12,
      decision: priceFlush({ tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 2.734375 }),
    });
    const text = formatWhyDetail(log);
    expect(text).toContain("flush 3: 2 change(s) from message 12 — waited: saving ≈ 2,188 ≤ rewrite ≈ 69,000");
    expect(text).toContain("pays the rewrite back after 86.3 requests");
    expect(text).toContain("2.73 requests expected to read it");
    expect(formatWhyDetail(emptyGateDecisionLog())).toBe("No gate decisions yet.");
  });
});

describe("tail hash continued from the last request", () => {
  const opts = (seam: number) => ({ at: 0, model: "m", thinkingLevel: "high", seamMessageIndex: seam });
  test("property: continuing the last request's tail gives the hash computed from scratch; a change inside it is never carried over", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ seam: fc.integer({ min: -1, max: 12 }), append: fc.integer({ min: 0, max: 3 }), edit: fc.option(fc.nat(), { nil: undefined }) }), { minLength: 1, maxLength: 10 }),
        (steps) => {
          let messages: WireMessage[] = [u(txt(5, "p0"))];
          let digest: BodyDigest | undefined;
          let tail: TailHash | undefined;
          steps.forEach((s, step) => {
            for (let k = 0; k < s.append; k++) messages = [...messages, k % 2 ? u(txt(3, `q${step}.${k}`)) : a(txt(4, `a${step}.${k}`))];
            if (s.edit !== undefined) messages = messages.map((m, i) => (i === s.edit! % messages.length ? u(txt(6, `edited${step}`)) : m));
            const body = payload(messages);
            digest = digestBody(body, digest);
            const fresh = fingerprintLayers(body, opts(s.seam));
            const out = fingerprintLayersWithTail(body, { ...opts(s.seam), precomputed: { blocks: digest.blocks, fingerprint: digest.fingerprint, tokens: digest.tokens }, ...(tail ? { previousTail: { tail, unchanged: digest.unchanged } } : {}) });
            expect(out.fingerprint).toEqual(fresh);
            tail = out.tail;
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
