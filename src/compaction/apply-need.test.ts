import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { applyFromTokens, applyNeed, COLD_SLACK_MS, cacheIsCold, msUntilCold, NEED_GROWTH_FACTOR, refreshDue } from "./apply-need.ts";

const WINDOW = 110_000;
const RESERVE = 16_384;
const THRESHOLD = WINDOW - RESERVE;

describe("applyNeed", () => {
  test("due within the largest recent turn of Pi's threshold; with no growth seen, at the threshold", () => {
    const at = (tokens: number | null, maxTurnGrowth = 2_400, cacheCold = false) => applyNeed({ tokens, contextWindow: WINDOW, reserveTokens: RESERVE, maxTurnGrowth, cacheCold });
    expect(at(THRESHOLD - 2_400)).toEqual({ due: true, why: "threshold" });
    expect(at(THRESHOLD - 2_401)).toEqual({ due: false });
    // The case: a summary ready at 44k of a 110k window is not needed yet.
    expect(at(44_000)).toEqual({ due: false });
    expect(at(THRESHOLD - 1, 0)).toEqual({ due: false });
    expect(at(THRESHOLD, 0)).toEqual({ due: true, why: "threshold" });
    expect(at(120_000)).toEqual({ due: true, why: "threshold" });
    // Unknown usage (right after a compaction): not near anything, unless the cache is cold.
    expect(at(null)).toEqual({ due: false });
    expect(at(null, 2_400, true)).toEqual({ due: true, why: "cold_cache" });
    expect(at(20_000, 2_400, true)).toEqual({ due: true, why: "cold_cache" });
  });

  test("no window: never due on size", () => {
    expect(applyFromTokens({ contextWindow: 0, reserveTokens: RESERVE, maxTurnGrowth: 1_000 })).toBeUndefined();
    expect(applyNeed({ tokens: 1e9, contextWindow: 0, reserveTokens: RESERVE, maxTurnGrowth: 0, cacheCold: false })).toEqual({ due: false });
  });

  test("property: due on size exactly from the threshold less NEED_GROWTH_FACTOR × the largest turn (never below 0)", () => {
    fc.assert(
      fc.property(fc.nat(200_000), fc.nat(60_000), (tokens, growth) => {
        const from = Math.max(0, THRESHOLD - Math.ceil(NEED_GROWTH_FACTOR * growth));
        expect(applyFromTokens({ contextWindow: WINDOW, reserveTokens: RESERVE, maxTurnGrowth: growth })).toBe(from);
        expect(applyNeed({ tokens, contextWindow: WINDOW, reserveTokens: RESERVE, maxTurnGrowth: growth, cacheCold: false }).due).toBe(tokens >= from);
      }),
    );
  });
});

describe("the cache clock", () => {
  test("cold once no request used the prefix for a whole lifetime; unknown facts are never cold", () => {
    expect(cacheIsCold({ lastUseAt: 1_000, now: 1_000 + 299_999, ttlMs: 300_000 })).toBe(false);
    expect(cacheIsCold({ lastUseAt: 1_000, now: 1_000 + 300_000, ttlMs: 300_000 })).toBe(true);
    expect(cacheIsCold({ lastUseAt: undefined, now: 1e12, ttlMs: 300_000 })).toBe(false);
    expect(cacheIsCold({ lastUseAt: 0, now: 1e12, ttlMs: undefined })).toBe(false);
  });

  test("the idle timer waits out the lifetime and a slack; now when already past", () => {
    expect(msUntilCold({ lastUseAt: 1_000, now: 61_000, ttlMs: 300_000 })).toBe(240_000 + COLD_SLACK_MS);
    expect(msUntilCold({ lastUseAt: 1_000, now: 1e9, ttlMs: 300_000 })).toBe(0);
    expect(msUntilCold({ lastUseAt: undefined, now: 0, ttlMs: 300_000 })).toBeUndefined();
  });
});

describe("refreshDue", () => {
  test("one summary's lead before the apply point, and only when the catch-up would stand for more than Pi keeps raw and than the summary covers", () => {
    const r = (tokens: number, gapTokens: number, coveredTokens = 10_000) => refreshDue({ tokens, applyFrom: 88_800, leadTokens: 12_000, gapTokens, coveredTokens, keepRecentTokens: 20_000 });
    expect(r(76_800, 30_000)).toBe(true);
    expect(r(90_000, 30_000)).toBe(true);
    expect(r(76_800, 20_000)).toBe(false); // the digest is no larger than the kept tail: caught up at apply
    expect(r(76_800, 30_000, 30_000)).toBe(false); // nor larger than what the model's summary covers
    expect(r(76_799, 60_000)).toBe(false); // a job started now would be ready long before it is needed, if ever
    expect(refreshDue({ tokens: 85_000, applyFrom: undefined, leadTokens: 0, gapTokens: 60_000, coveredTokens: 0, keepRecentTokens: 20_000 })).toBe(false);
  });
});
