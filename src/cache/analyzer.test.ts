import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { analyzeRun } from "./analyzer.ts";
import { summarizeRun } from "./summary.ts";
import type { WireContentBlock, WireMessage } from "./wire-types.ts";
import { a, MARK, MARK_1H, piBody, res, testEstimator, txt, u, use } from "../../test/support/cache/wire-builders.ts";

const opts = { estimator: testEstimator };
const at = (ms: number, messages: WireMessage[], extra: Parameters<typeof piBody>[1] = {}, outputTokens?: number) => ({
  timestamp: ms,
  body: piBody(messages, extra),
  ...(outputTokens !== undefined ? { outputTokens } : {}),
});

// Block layout of every piBody: [0] tool 1000 tok (mark), [1] system 500 tok (mark), then messages.
// The tool prefix (1000) is below the 1024 minimum, so it is never written.
const U0 = u(txt(100, "p0"));
const A0 = a(txt(50, "a0"), use("c1"));
const U1 = u(res("c1", 200));
const A1 = a(txt(30, "a1"));
const U2 = u(txt(40, "p1"));
const A2 = a(txt(20, "a2"));
const U3 = u(txt(20, "p2"));

describe("growing conversation", () => {
  const run = analyzeRun(
    [at(0, [U0]), at(10_000, [U0, A0, U1]), at(20_000, [U0, A0, U1, A1, U2]), at(30_000, [U0, A0, U1, A1, U2, A2, U3])],
    opts,
  );
  test("req0 writes system (1500) and the first prompt (+100)", () => {
    // prefix: tool 1000 | sys 1500 | U0 1600. Tool prefix < 1024: not written.
    expect(run[0]).toMatchObject({ read: 0, write: 1600, uncached: 0, totalTokens: 1600, markCount: 3, bust: false });
  });
  test("req1 reads req0's full prefix and writes the growth", () => {
    // blocks: U0 1600, A0.text 1650, A0.use 1660, U1.result 1860. Mark at 5 walks back to 2: read 1600.
    expect(run[1]).toMatchObject({ read: 1600, write: 260, uncached: 0, totalTokens: 1860 });
  });
  test("reads grow, no busts", () => {
    // req2: +30 +40 = 1930, reads 1860 writes 70; req3: +20 +20 = 1970, reads 1930 writes 40.
    expect(run.map((r) => r.read)).toEqual([0, 1600, 1860, 1930]);
    expect(run.map((r) => r.write)).toEqual([1600, 260, 70, 40]);
    expect(run.filter((r) => r.bust)).toHaveLength(0);
    expect(run.every((r) => r.divergence === undefined)).toBe(true);
  });
  test("summary totals and hit ratio", () => {
    const s = summarizeRun(run, { userPrompts: 3 });
    // reads 0+1600+1860+1930 = 5390; writes 1600+260+70+40 = 1970; uncached 0.
    expect(s).toMatchObject({ read: 5390, write: 1970, uncached: 0, busts: 0, bustsPerUserPrompt: 0 });
    expect(s.hitRatio).toBeCloseTo(5390 / 7360, 10);
    // cost: 0.1 × 5390 + 1.25 × 1970 = 539 + 2462.5 = 3001.5
    expect(s.cost).toBeCloseTo(3001.5, 6);
  });
});

describe("mutated old block", () => {
  const U0x = u(txt(100, "p0-edited"));
  const run = analyzeRun([at(0, [U0]), at(10_000, [U0, A0, U1]), at(20_000, [U0x, A0, U1, A1, U2])], opts);
  test("busts at the request that changed it; read falls back to tools+system", () => {
    // Only the system mark's prefix (1500) still matches. Total 1930 → write 430.
    expect(run[2]).toMatchObject({ bust: true, read: 1500, write: 430, uncached: 0 });
    expect(run[2].divergence).toEqual({ blockIndex: 2, layer: "messages", messageIndex: 0 });
    expect(run.slice(0, 2).some((r) => r.bust)).toBe(false);
  });
});

describe("TTL", () => {
  test("gap over 5 min → nothing read, not a bust (prefix dead)", () => {
    const run = analyzeRun([at(0, [U0]), at(300_001, [U0, A0, U1])], opts);
    // Everything re-written: system 1500 + 360 = 1860.
    expect(run[1]).toMatchObject({ read: 0, write: 1860, bust: false });
  });
  test("gap of exactly 5 min still reads", () => {
    const run = analyzeRun([at(0, [U0]), at(300_000, [U0, A0, U1])], opts);
    expect(run[1].read).toBe(1600);
  });
  test("a read refreshes the entry", () => {
    // U0's prefix written at 0, read at 200s; at 450s it is 250s old → alive (450s without refresh).
    const run = analyzeRun([at(0, [U0]), at(200_000, [U0, A0, U1]), at(450_000, [U0])], opts);
    expect(run[2]).toMatchObject({ read: 1600, write: 0 });
  });
});

describe("20-block lookback", () => {
  const uses = (n: number) => Array.from({ length: n }, (_, i) => use(`t${i}`));
  const results = (n: number) => Array.from({ length: n }, (_, i) => res(`t${i}`, 20));
  test("previous prefix 20 blocks before the mark is found", () => {
    // req0's last mark at block 2. req1 adds 10 uses (3..12) + 10 results (13..22): mark at 22, 22-20 = 2 → hit.
    const run = analyzeRun([at(0, [U0]), at(1000, [U0, a(...uses(10)), u(...results(10))])], opts);
    // total 1600 + 100 + 200 = 1900
    expect(run[1]).toMatchObject({ read: 1600, write: 300, bust: false });
  });
  test("21 blocks back misses; only tools+system read; counts as a bust", () => {
    // text + 10 uses (3..13) + 10 results (14..23): mark at 23 looks back to 3, misses block 2.
    const run = analyzeRun([at(0, [U0]), at(1000, [U0, a(txt(50, "t"), ...uses(10)), u(...results(10))])], opts);
    // total 1600 + 50 + 100 + 200 = 1950; read 1500 (system mark); write 450.
    expect(run[1]).toMatchObject({ read: 1500, write: 450, bust: true });
  });
});

describe("1h TTL pricing", () => {
  test("writes cost 2×, entries live past 5 min", () => {
    const run = analyzeRun(
      [at(0, [U0], { mark: MARK_1H }, 10), at(1_800_000, [U0, A1, u(txt(70, "p1"))], { mark: MARK_1H })],
      opts,
    );
    // req0: write1h 1600, cost 2 × 1600 + 5 × 10 output = 3250.
    expect(run[0]).toMatchObject({ write1h: 1600, write5m: 0, cost: 3250 });
    // req1 at 30 min: reads 1600, writes 100 at 2× → 160 + 200 = 360.
    expect(run[1]).toMatchObject({ read: 1600, write1h: 100, cost: 360 });
    const short = analyzeRun([at(0, [U0]), at(1_800_000, [U0, A1, u(txt(70, "p1"))])], opts);
    expect(short[1].read).toBe(0);
  });
});

describe("marks, minimum size, invalidation", () => {
  test("more than 4 marks are counted", () => {
    const marked = (b: WireContentBlock): WireContentBlock => ({ ...b, cache_control: MARK });
    const run = analyzeRun([at(0, [u(marked(txt(10, "x")), marked(txt(10, "y")), txt(10, "z"))])], opts);
    // tool + system + x + y + z (last block) = 5
    expect(run[0]).toMatchObject({ markCount: 5, tooManyMarks: true });
  });
  test("below the minimum nothing is written", () => {
    const run = analyzeRun([at(0, [U0]), at(1000, [U0, A0, U1])], { ...opts, minCacheableTokens: 5000 });
    expect(run.map((r) => [r.read, r.write, r.uncached])).toEqual([
      [0, 0, 1600],
      [0, 0, 1860],
    ]);
  });
  test("external invalidation drops every entry and is not a bust", () => {
    const run = analyzeRun([at(0, [U0]), at(1000, [U0, A0, U1])], { ...opts, invalidateBefore: new Set([1]) });
    expect(run[1]).toMatchObject({ read: 0, write: 1860, invalidated: true, bust: false });
  });
});

describe("pairing violations", () => {
  test("missing, orphan and duplicate ids", () => {
    const run = analyzeRun(
      [
        at(0, [
          u(txt(5, "go")),
          a(use("x"), use("y")),
          u(res("x", 1)), // y unanswered
          a(use("z")),
          u(res("z", 1), res("q", 1)), // q answers nothing
          a(use("z")), // duplicate tool_use id
          u(res("z", 1)), // duplicate tool_result id
        ]),
      ],
      opts,
    );
    const v = run[0].pairingViolations.map((p) => `${p.kind}:${p.id}@${p.messageIndex}`).sort();
    expect(v).toEqual(
      ["missing_result:y@1", "orphan_result:q@4", "duplicate_tool_use_id:z@5", "duplicate_tool_result_id:z@6"].sort(),
    );
  });
  test("a well-formed loop has none", () => {
    expect(analyzeRun([at(0, [U0, A0, U1])], opts)[0].pairingViolations).toEqual([]);
  });
});

describe("properties", () => {
  test("growth within TTL and lookback never busts and reads the previous prompt", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ blocks: fc.integer({ min: 1, max: 9 }), tokens: fc.integer({ min: 1, max: 400 }), gap: fc.integer({ min: 0, max: 300_000 }) }), { minLength: 1, maxLength: 12 }),
        (turns) => {
          const messages: WireMessage[] = [U0];
          const requests = [at(0, [...messages])];
          let t = 0;
          turns.forEach((turn, i) => {
            // one assistant + one user message, 2 × blocks ≤ 18 new blocks < 20
            messages.push(a(...Array.from({ length: turn.blocks }, (_, j) => txt(turn.tokens, `a${i}.${j}`))));
            messages.push(u(...Array.from({ length: turn.blocks }, (_, j) => txt(turn.tokens, `u${i}.${j}`))));
            t += turn.gap;
            requests.push(at(t, [...messages]));
          });
          const run = analyzeRun(requests, opts);
          for (let i = 1; i < run.length; i++) {
            expect(run[i].bust).toBe(false);
            expect(run[i].read).toBe(run[i - 1].totalTokens);
          }
        },
      ),
      { numRuns: 50 },
    );
  });
  test("read + write + uncached = total for arbitrary edits and gaps", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ tag: fc.integer({ min: 0, max: 3 }), len: fc.integer({ min: 1, max: 6 }), gap: fc.integer({ min: 0, max: 400_000 }) }), { minLength: 1, maxLength: 10 }), (steps) => {
        let t = 0;
        const requests = steps.map((s) => {
          t += s.gap;
          const msgs = Array.from({ length: s.len }, (_, i) => (i % 2 ? a(txt(300, `a${i}`)) : u(txt(300, `u${i}-${i === 0 ? s.tag : 0}`))));
          return at(t, msgs);
        });
        for (const r of analyzeRun(requests, opts)) {
          expect(r.read + r.write + r.uncached).toBe(r.totalTokens);
          expect(r.read).toBeGreaterThanOrEqual(0);
          expect(r.uncached).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 50 },
    );
  });
});
