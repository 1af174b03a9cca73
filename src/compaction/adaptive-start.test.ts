import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { adaptiveStartTokens, startFloor, DEFAULT_EXPECTED_LATENCY_MS, EMPTY_PACE, expectedLatencyMs, growthPerMs, maxTurnGrowth, type Pace, PACE_TURNS, recordLatency, recordTurn } from "./adaptive-start.ts";

function paceOf(samples: Array<[number, number]>, latencies: number[] = []): Pace {
  let p = EMPTY_PACE;
  for (const [at, tokens] of samples) p = recordTurn(p, { at, tokens });
  for (const l of latencies) p = recordLatency(p, l);
  return p;
}

describe("pace", () => {
  test("growth per turn and per ms over the recent series", () => {
    const p = paceOf([[0, 50_000], [100, 52_000], [200, 57_000], [300, 59_000]]);
    expect(maxTurnGrowth(p)).toBe(5_000);
    expect(growthPerMs(p)).toBeCloseTo(30);
  });

  test("a shrinking context starts a new series; only the last turns are kept", () => {
    expect(paceOf([[0, 80_000], [100, 90_000], [200, 30_000]]).turns).toEqual([{ at: 200, tokens: 30_000 }]);
    const long = paceOf(Array.from({ length: 20 }, (_, i) => [i * 10, i * 1_000] as [number, number]));
    expect(long.turns).toHaveLength(PACE_TURNS);
  });

  test("expected latency: the slowest of the last three, the default before any", () => {
    expect(expectedLatencyMs(EMPTY_PACE)).toBe(DEFAULT_EXPECTED_LATENCY_MS);
    expect(expectedLatencyMs(paceOf([], [9_000, 1_000, 2_000, 3_000]))).toBe(3_000);
  });
});

describe("adaptiveStartTokens", () => {
  // Pi's threshold 93,616; floor keep + reserve = 36,384.
  const settings = { contextWindow: 110_000, reserveTokens: 16_384, keepRecentTokens: 20_000, configuredStart: 88_000 };

  test("no growth observed: the configured start", () => {
    expect(adaptiveStartTokens({ ...settings, pace: EMPTY_PACE })).toBe(88_000);
  });

  test("slow growth: the configured start (the lead is short)", () => {
    // 2,400 tokens per 10 s, 2 s summaries: lead 600 tokens.
    const pace = paceOf([[0, 40_000], [10_000, 42_400], [20_000, 44_800]], [2_000]);
    expect(adaptiveStartTokens({ ...settings, pace })).toBe(88_000);
  });

  test("faster growth: earlier, by growth × latency × 1.25 before Pi's threshold", () => {
    // 10 tokens/ms, 2 s summaries: lead 25,000 → 68,616.
    expect(adaptiveStartTokens({ ...settings, pace: paceOf([[0, 30_000], [1_000, 40_000]], [2_000]) })).toBe(68_616);
  });

  test("fast growth: not below the floor, so compactions do not cascade", () => {
    // 24 tokens/ms, 2 s summaries: lead 60,000 → 33,616, floored at 36,384.
    const pace = paceOf([[0, 30_000], [100, 32_400], [200, 34_800]], [2_000]);
    expect(adaptiveStartTokens({ ...settings, pace })).toBe(36_384);
    // 20 tokens/ms: lead 50,000 → 43,616, above the floor.
    expect(adaptiveStartTokens({ ...settings, pace: paceOf([[0, 30_000], [100, 32_000]], [2_000]) })).toBe(43_616);
    // A configured start below the floor is kept.
    expect(adaptiveStartTokens({ ...settings, configuredStart: 30_000, pace })).toBe(30_000);
  });

  test("a large window: never below 35% of Pi's threshold, however fast the growth", () => {
    // 1M window, instant answers (24 tokens/ms, 2 s summaries → a 60k lead is nothing here; 2,400 tokens/ms → 6M).
    const big = { contextWindow: 1_000_000, reserveTokens: 16_384, keepRecentTokens: 20_000, configuredStart: 800_000 };
    const pace = paceOf([[0, 30_000], [1, 32_400], [2, 34_800]], [2_000]);
    expect(adaptiveStartTokens({ ...big, pace })).toBe(Math.ceil((1_000_000 - 16_384) * 0.35));
    expect(startFloor(big)).toBe(344_266);
    // The 110k window keeps keep + reserve.
    expect(startFloor(settings)).toBe(36_384);
  });

  test("an empty configured window stays empty", () => {
    const pace = paceOf([[0, 30_000], [100, 40_000]]);
    expect(adaptiveStartTokens({ ...settings, configuredStart: 110_000, pace })).toBe(110_000);
  });

  test("property: never later than configured, never below the floor unless configured lower", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 0, max: 20_000 })), { maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 120_000 }), { maxLength: 4 }),
        fc.integer({ min: 0, max: 110_000 }),
        (steps, latencies, configuredStart) => {
          let at = 0;
          let tokens = 10_000;
          const samples = steps.map(([dt, dTok]) => [(at += dt), (tokens += dTok)] as [number, number]);
          const start = adaptiveStartTokens({ ...settings, configuredStart, pace: paceOf(samples, latencies) });
          expect(start).toBeLessThanOrEqual(configuredStart);
          expect(start).toBeGreaterThanOrEqual(Math.min(configuredStart, 36_384));
        },
      ),
    );
  });
});
