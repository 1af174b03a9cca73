/** The analyzer under automatic prefix caching (OpenAI, Google) and per-model cache keys. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { analyzeRun } from "./analyzer.ts";
import type { RequestCacheRule, WireMessage } from "./wire-types.ts";
import { a, piBody, res, testEstimator, txt, u, use } from "../../test/support/cache/wire-builders.ts";

const OPENAI: RequestCacheRule = { mechanism: "automatic-prefix", minCacheableTokens: 1024, stepTokens: 128, lookbackBlocks: 0, ttlMs: 600_000, writePremium: false };
const opts = { estimator: testEstimator };
const req = (ms: number, messages: WireMessage[], rule: RequestCacheRule = OPENAI, cacheKey?: string) => ({
  timestamp: ms,
  body: piBody(messages),
  cacheRule: rule,
  ...(cacheKey ? { cacheKey } : {}),
});

// piBody: tool 1000 + system 500 tokens, then the messages (marks are ignored here).
const U0 = u(txt(100, "p0"));
const A0 = a(txt(50, "a0"), use("c1"));
const U1 = u(res("c1", 200));

describe("automatic prefix caching", () => {
  const run = analyzeRun([req(0, [U0]), req(10_000, [U0, A0, U1]), req(20_000, [U0, A0, U1])], opts);
  test("first request: nothing read, nothing written without a write premium", () => {
    expect(run[0]).toMatchObject({ totalTokens: 1600, read: 0, write: 0, uncached: 1600, markCount: 0 });
  });
  test("growth reads the previous prompt, in 128-token steps from 1024", () => {
    // previous prompt 1600 → 1024 + 4×128 = 1536 read; 1860 − 1536 uncached.
    expect(run[1]).toMatchObject({ totalTokens: 1860, read: 1536, write: 0, uncached: 324, bust: false });
    // identical prompt: 1860 → 1024 + 6×128 = 1792.
    expect(run[2]).toMatchObject({ read: 1792, uncached: 68 });
  });
  test("with a write premium the newly cached part is a write", () => {
    const w = analyzeRun([req(0, [U0], { ...OPENAI, writePremium: true }), req(10_000, [U0, A0, U1], { ...OPENAI, writePremium: true })], opts);
    expect(w[0]).toMatchObject({ read: 0, write: 1536, uncached: 64 });
    expect(w[1]).toMatchObject({ read: 1536, write: 1792 - 1536, uncached: 1860 - 1792 });
  });
  test("the entry expires after the rule's lifetime of inactivity", () => {
    const late = analyzeRun([req(0, [U0]), req(600_001, [U0, A0, U1])], opts);
    expect(late[1].read).toBe(0);
  });
  test("a change inside history reads only the common prefix and is a bust", () => {
    const edited = analyzeRun([req(0, [U0, A0, U1]), req(10_000, [u(txt(100, "p0-edited")), A0, U1])], opts);
    // common prefix: tools + system = 1500 → 1408 cached.
    expect(edited[1]).toMatchObject({ read: 1408, bust: true });
  });
  test("a prompt below the minimum is never cached", () => {
    const small = analyzeRun([req(0, [u(txt(10, "s"))], { ...OPENAI, minCacheableTokens: 4096 }), req(1000, [u(txt(10, "s"))], { ...OPENAI, minCacheableTokens: 4096 })], opts);
    expect(small.map((r) => r.read)).toEqual([0, 0]);
  });
  test("read + write + uncached is the prompt; read never exceeds an earlier prompt", () => {
    const msgs = [U0, A0, U1, a(txt(70, "a1")), u(txt(300, "p1")), a(txt(20, "a2")), u(txt(900, "p2"))];
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: msgs.length }), { minLength: 1, maxLength: 8 }), fc.boolean(), (lengths, premium) => {
        const rule = { ...OPENAI, writePremium: premium };
        const out = analyzeRun(lengths.map((n, i) => req(i * 1000, msgs.slice(0, n), rule)), opts);
        out.forEach((r, i) => {
          expect(r.read + r.write + r.uncached).toBe(r.totalTokens);
          expect(r.read).toBeLessThanOrEqual(Math.max(0, ...out.slice(0, i).map((p) => p.totalTokens)));
          expect(r.read % 128).toBe(0);
          if (!premium) expect(r.write).toBe(0);
        });
      }),
    );
  });
});

describe("one cache per model (cacheKey)", () => {
  test("a switch to another model reads nothing and is no bust; switching back reads the first model's entry", () => {
    const run = analyzeRun([req(0, [U0, A0, U1], OPENAI, "m1"), req(10_000, [U0, A0, U1], OPENAI, "m2"), req(20_000, [U0, A0, U1], OPENAI, "m1")], opts);
    expect(run[1]).toMatchObject({ read: 0, bust: false });
    expect(run[2].read).toBe(1792);
  });
});
