import { describe, expect, test } from "bun:test";
import { calibrate, findExternalInvalidations, findExternalInvalidationsAgainstReplay } from "./calibration.ts";

describe("calibrate", () => {
  test("total error = Σ|Δ| over the three series / Σ recorded", () => {
    const sim = [
      { read: 0, write: 1000, uncached: 0 },
      { read: 1000, write: 300, uncached: 10 },
    ];
    const rec = [
      { cacheRead: 0, cacheWrite: 1100, input: 3 },
      { cacheRead: 1100, cacheWrite: 200, input: 7 },
    ];
    // |Δ|: req0 0 + 100 + 3 = 103; req1 100 + 100 + 3 = 203 → 306. Recorded sum 1103 + 1307 = 2410.
    const c = calibrate(sim, rec);
    expect(c.total_error).toBeCloseTo(306 / 2410, 12);
    // prompt sizes: sim 1000, 1310; rec 1103, 1307 → |Δ| 103 + 3 = 106.
    expect(c.prompt_size_error).toBeCloseTo(106 / 2410, 12);
    expect(c.read).toEqual({ recorded: 1100, simulated: 1000, absError: 100 });
  });
  test("length mismatch throws (programming error, not input error)", () => {
    expect(() => calibrate([], [{ cacheRead: 0, cacheWrite: 0, input: 0 }])).toThrow();
  });
});

describe("findExternalInvalidations", () => {
  const r = (timestamp: number, input: number, cacheRead: number, cacheWrite: number) => ({ timestamp, recorded: { input, cacheRead, cacheWrite } });
  test("in-TTL drops are flagged, TTL-explained and partial reads are not", () => {
    const reqs = [
      r(0, 3, 0, 10_000),
      r(10_000, 0, 10_000, 500), // normal
      r(20_000, 3, 0, 10_600), // in-TTL miss → external
      r(400_000, 3, 0, 10_800), // gap 380 s > 300 s → TTL, not flagged
      r(410_000, 3, 6_000, 4_900), // read 6000 ≥ 0.5 × 10803 → not flagged
      r(420_000, 3, 5_000, 6_000), // 5000 < 0.5 × 10903 = 5451.5 → flagged
    ];
    expect(findExternalInvalidations(reqs)).toEqual([2, 5]);
    expect(findExternalInvalidations(reqs, { ttlMs: 3_600_000 })).toEqual([2, 3, 5]);
  });
  test("a request's own TTL wins over the option; a model switch is never flagged", () => {
    const reqs = [r(0, 3, 0, 10_000), { ...r(400_000, 3, 0, 10_600), ttlMs: 600_000 }, { ...r(410_000, 3, 0, 10_600), cacheKey: "other" }];
    expect(findExternalInvalidations(reqs)).toEqual([1]);
  });
});

describe("findExternalInvalidationsAgainstReplay (a recording made with the keeper)", () => {
  const r = (timestamp: number, cacheRead: number, cacheKey = "m") => ({ timestamp, recorded: { input: 10, cacheRead, cacheWrite: 500 }, ttlMs: 300_000, cacheKey });
  test("a low read the replay also shows (the keeper's own rewrite) is not flagged; one the replay could have read is", () => {
    const reqs = [r(0, 0), r(10_000, 9_000), r(20_000, 1_000), r(30_000, 1_000), r(400_000, 0), r(410_000, 0, "other")];
    const replayed = [{ read: 0 }, { read: 9_100 }, { read: 1_200 }, { read: 9_500 }, { read: 9_600 }, { read: 9_700 }];
    // 2: the replay rewrote too; 3: it could read 9,500 → flagged; 4: past the TTL; 5: another model.
    expect(findExternalInvalidationsAgainstReplay(reqs, replayed)).toEqual([3]);
    // The rule for bare recordings flags the keeper's own rewrite at 2 and misses 3.
    expect(findExternalInvalidations(reqs)).toEqual([2]);
  });
});
