import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { cachedTokensFromOf, readableAnchors } from "./rewrite-anchor.ts";

describe("readableAnchors", () => {
  // 12 messages: 0 user, then (assistant 2 blocks, tool result 1 block) × 5, then a final answer (1 block); a new prompt follows (1 block).
  const blocks = [1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 1];
  const requestEnd = [true, false, true, false, true, false, true, false, true, false, true, false];
  test("no seam: a change near the end re-writes from the request end before it; far back, everything", () => {
    const anchors = readableAnchors({ seamCut: undefined, blocks, requestEnd, trailingBlocks: 1, lookbackBlocks: 6 });
    // after(e + 1): blocks from e + 1 to the end plus the new prompt.
    // e = 8 (tool result): messages 9..11 = 2 + 1 + 1 = 4, + 1 = 5 <= 6 → changes at 9.. re-write from 9.
    // e = 6: messages 7..11 = 2 + 1 + 2 + 1 + 1 = 7, + 1 = 8 > 6 → not readable.
    expect(anchors[11]).toBe(11); // e = 10: 1 + 1 = 2 <= 6
    expect(anchors[10]).toBe(9);
    expect(anchors[9]).toBe(9);
    expect(anchors[8]).toBe(0);
    expect(anchors[3]).toBe(0);
  });
  test("a seam at or before the change is read", () => {
    const anchors = readableAnchors({ seamCut: 5, blocks, requestEnd, trailingBlocks: 1, lookbackBlocks: 6 });
    expect(anchors[4]).toBe(0);
    expect(anchors[5]).toBe(5);
    expect(anchors[8]).toBe(5);
    expect(anchors[10]).toBe(9);
  });
  test("automatic prefix caching (OpenAI, Google): every prefix the last request sent is cached, so a rewrite starts at the change", () => {
    const anchors = readableAnchors({ seamCut: undefined, blocks, requestEnd, trailingBlocks: 1, automaticPrefix: true });
    expect(anchors).toEqual(blocks.map((_, p) => p).concat(blocks.length));
  });
  test("cachedTokensFromOf: the last request's tokens from the anchor of the change to its end", () => {
    const sent = [100, 10, 500, 10, 500, 10, 500];
    const anchors = readableAnchors({ seamCut: 3, blocks: [1, 2, 1, 2, 1, 2, 1], requestEnd: [true, false, true, false, true, false, true], trailingBlocks: 0, lookbackBlocks: 3 });
    const from = cachedTokensFromOf(sent, anchors);
    expect(from(2)).toBe(1630); // before the seam, no readable entry: everything
    expect(from(4)).toBe(1020); // the seam at 3
    expect(from(6)).toBe(510); // the lookback: 3 blocks follow the request end at 4, so the rewrite starts at 5
    expect(cachedTokensFromOf(sent, sent.map((_, p) => p).concat(sent.length))(4)).toBe(1010);
  });
  test("non-decreasing and never past the change", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.boolean()), { minLength: 1, maxLength: 40 }), fc.option(fc.integer({ min: 0, max: 40 })), (rows, seam) => {
        const n = rows.length;
        const seamCut = seam === null ? undefined : Math.min(seam, n);
        const a = readableAnchors({ seamCut, blocks: rows.map((r) => r[0]), requestEnd: rows.map((r) => r[1]), trailingBlocks: 1 });
        expect(a).toHaveLength(n + 1);
        for (let p = 0; p <= n; p++) {
          expect(a[p]).toBeLessThanOrEqual(p);
          if (p > 0) expect(a[p]).toBeGreaterThanOrEqual(a[p - 1]);
        }
      }),
    );
  });
});
