import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { closedCuts, messageCutPositions, tokenCutPositions } from "./closed-cuts.ts";
import { cutFromTimestamp, quantizeBoundary, quantizeBranchBoundary } from "./quantize.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

/** n plain text turns alternating user / assistant, timestamps 1000, 2000, ... */
function plainBranch(n: number): ContextMessage[] {
  return Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(`u${i}`, (i + 1) * 1000) : assistant([text(`a${i}`)], (i + 1) * 1000)));
}

describe("closedCuts", () => {
  test("a cut between a call and its result is open; after the result it is closed", () => {
    const m = [user("go", 1), assistant([call("c1", "read")], 2), result("c1", "read", "x", 3), assistant([text("done")], 4)];
    expect(closedCuts(m)).toEqual([true, true, false, true, true]);
  });
  test("a parallel batch stays open until its last result", () => {
    const m = [assistant([call("c1", "read"), call("c2", "read")], 1), result("c1", "read", "x", 2), result("c2", "read", "y", 3)];
    expect(closedCuts(m)).toEqual([true, false, false, true]);
  });
  test("an orphaned call is settled by the next turn (pi-ai inserts a synthetic result)", () => {
    const m = [assistant([call("c1", "read")], 1), user("never mind", 2), assistant([text("ok")], 3)];
    expect(closedCuts(m)).toEqual([true, false, true, true]);
  });
  test("errored and aborted assistant messages open nothing", () => {
    const m = [assistant([call("c1", "read")], 1, { stopReason: "aborted" }), assistant([call("c2", "x")], 2, { stopReason: "error" })];
    expect(closedCuts(m)).toEqual([true, true, true]);
  });
  test("a reused tool-call id is counted, not collapsed", () => {
    const m = [assistant([call("dup", "read"), call("dup", "read")], 1), result("dup", "read", "x", 2), result("dup", "read", "y", 3)];
    expect(closedCuts(m)).toEqual([true, false, false, true]);
  });
  test("token cut positions are prefix sums", () => {
    expect(tokenCutPositions(plainBranch(3), () => 7)).toEqual([0, 7, 14, 21]);
  });
});

describe("quantizeBoundary: the staircase", () => {
  // keepTail 4, chunk 50 (the seed's table): candidate = length - 4.
  const step = (length: number, previousCut?: number) =>
    quantizeBoundary({ cutPositions: messageCutPositions(length), closed: Array(length + 1).fill(true), candidate: length - 4, chunk: 50, previousCut });

  test("54 messages: candidate 50 -> boundary 50", () => {
    expect(step(54)).toMatchObject({ cut: 50, moved: true, reason: "first", gridPosition: 50 });
  });
  test("80 and 103 messages: still 50 (held)", () => {
    expect(step(80, 50)).toMatchObject({ cut: 50, moved: false, reason: "held" });
    expect(step(103, 50)).toMatchObject({ cut: 50, moved: false, reason: "held", gridPosition: 50 });
  });
  test("104 messages: candidate 100 -> jumps to 100", () => {
    expect(step(104, 50)).toMatchObject({ cut: 100, moved: true, reason: "advanced" });
  });
  test("below the first grid point nothing is set", () => {
    expect(step(40)).toMatchObject({ cut: undefined, moved: false, reason: "not-ready" });
  });
  test("never backwards: a grid point behind the persisted cut (e.g. chunk raised) keeps it", () => {
    // 150 messages, chunk 80: candidate 146 -> grid 80, behind the persisted 100.
    const q = quantizeBoundary({ cutPositions: messageCutPositions(150), closed: Array(151).fill(true), candidate: 146, chunk: 80, previousCut: 100 });
    expect(q).toMatchObject({ cut: 100, moved: false, reason: "held", gridPosition: 80 });
  });
  test("snaps back to the nearest closed cut at or before the grid point", () => {
    const closed = Array(61).fill(true);
    closed[50] = false; // grid point splits a call from its result
    closed[49] = false;
    const q = quantizeBoundary({ cutPositions: messageCutPositions(60), closed, candidate: 56, chunk: 50 });
    expect(q).toMatchObject({ cut: 48, gridPosition: 50 });
  });
  test("no closed cut at all: nothing is set", () => {
    const closed = [true, ...Array(60).fill(false)];
    expect(quantizeBoundary({ cutPositions: messageCutPositions(60), closed, candidate: 56, chunk: 50 }).reason).toBe("no-closed-cut");
  });
  test("minimumCut holds a boundary that would cover too little", () => {
    expect(quantizeBoundary({ cutPositions: messageCutPositions(60), closed: Array(61).fill(true), candidate: 56, chunk: 10, minimumCut: 60 })).toMatchObject({
      cut: undefined,
      reason: "below-minimum",
    });
  });
  test("in tokens: positions are cumulative tokens, the grid is in tokens", () => {
    // 10 messages of 3000 tokens: cuts at 0, 3000, ..., 30000. Candidate 29000 - 5000 = 24000, chunk 10000 -> grid 20000 -> cut 6 (18000).
    const positions = Array.from({ length: 11 }, (_, k) => k * 3000);
    expect(quantizeBoundary({ cutPositions: positions, closed: Array(11).fill(true), candidate: 24000, chunk: 10000 })).toMatchObject({ cut: 6, gridPosition: 20000 });
  });
});

describe("quantizeBranchBoundary: persisted as a timestamp", () => {
  test("round trip over a growing branch keeps the same persisted value until the next grid point", () => {
    const unit = { kind: "messages" as const, keepTail: 4, chunk: 50 };
    const first = quantizeBranchBoundary({ messages: plainBranch(54), unit });
    // cut 50: the last frozen message is index 49, timestamp 50 * 1000.
    expect(first).toMatchObject({ cut: 50, frozenThroughTimestamp: 50_000 });
    const held = quantizeBranchBoundary({ messages: plainBranch(103), unit, previousFrozenThroughTimestamp: first.frozenThroughTimestamp });
    expect(held).toMatchObject({ cut: 50, moved: false, frozenThroughTimestamp: 50_000 });
    const next = quantizeBranchBoundary({ messages: plainBranch(104), unit, previousFrozenThroughTimestamp: held.frozenThroughTimestamp });
    expect(next).toMatchObject({ cut: 100, moved: true, frozenThroughTimestamp: 100_000 });
  });
  test("cutFromTimestamp counts the messages at or before the timestamp", () => {
    expect(cutFromTimestamp(plainBranch(10), 4000)).toBe(4);
    expect(cutFromTimestamp(plainBranch(10), 0)).toBe(0);
    // Pi's leading system message, stamped after the first prompt: no position, it follows its predecessor.
    const lead = { role: "system", content: "You are pi.", timestamp: 1500 } as unknown as ContextMessage;
    expect(cutFromTimestamp([lead, ...plainBranch(10)], 1000)).toBe(2);
  });
  test("token unit over a branch", () => {
    // 20 messages of 1000 tokens, keep 3000, chunk 5000: candidate 17000 -> grid 15000 -> cut 15.
    const q = quantizeBranchBoundary({
      messages: plainBranch(20),
      unit: { kind: "tokens", keepTailTokens: 3000, chunkTokens: 5000, tokensOf: () => 1000 },
    });
    expect(q).toMatchObject({ cut: 15, frozenThroughTimestamp: 15_000 });
  });
});

describe("quantizeBoundary properties", () => {
  test("over a growing branch the boundary never decreases, is always closed, and moves at most once per grid point", () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 10 }),
        (closedTail, chunk, keepTail) => {
          const closed = [true, ...closedTail];
          const n = closedTail.length;
          let previous: number | undefined;
          let moves = 0;
          for (let len = 1; len <= n; len++) {
            const q = quantizeBoundary({
              cutPositions: messageCutPositions(len),
              closed: closed.slice(0, len + 1),
              candidate: len - keepTail,
              chunk,
              previousCut: previous,
            });
            if (previous !== undefined) expect(q.cut!).toBeGreaterThanOrEqual(previous);
            if (q.cut !== undefined) {
              expect(closed[q.cut]).toBe(true);
              expect(q.cut).toBeLessThanOrEqual(Math.max(previous ?? 0, len - keepTail));
            }
            if (q.moved) moves++;
            previous = q.cut;
          }
          expect(moves).toBeLessThanOrEqual(Math.floor(Math.max(0, n - keepTail) / chunk));
        },
      ),
    );
  });
});
