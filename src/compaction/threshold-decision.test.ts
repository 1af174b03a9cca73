import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { budgetFollowsOutput, decidePendingAtCompact, hasRoom, outputRoom, roomMargin, shouldAbortAndCompact } from "./threshold-decision.ts";

// A 110k window, a 16,384-token output ceiling with Anthropic budget thinking, 2,400 tokens a turn.
const room = { contextWindow: 110_000, maxTurnGrowth: 2_400, maxOutputTokens: 16_384, budgetFollowsOutput: true };
const base = { ...room, reason: "threshold" as const, customInstructions: false, maxWaitMs: 60_000, stallMs: -1 };

describe("room", () => {
  test("margin: twice the largest recent growth", () => {
    expect(roomMargin(0)).toBe(0);
    expect(roomMargin(5_000)).toBe(10_000);
    expect(roomMargin(Number.NaN)).toBe(0);
  });

  test("pi-ai's output clamp", () => {
    expect(outputRoom(80_000, 110_000)).toBe(25_904); // below 32,768 of room: only the 4,096 safety
    expect(outputRoom(100_000, 200_000)).toBe(85_000); // 15% safety
  });

  test("budget thinking: room while the request after the next turn keeps its full max_tokens", () => {
    // next = tokens + 4,800 must leave 16,384: next <= 110,000 - 4,096 - 16,384 = 89,520.
    expect(hasRoom({ ...room, tokens: 84_720 })).toBe(true);
    expect(hasRoom({ ...room, tokens: 84_721 })).toBe(false);
    // Sonnet-like: 200k window, 64k output: next <= 118,260 (1.15 × next <= 136,000).
    expect(hasRoom({ ...room, contextWindow: 200_000, maxOutputTokens: 64_000, tokens: 118_260 - 4_800 })).toBe(true);
    expect(hasRoom({ ...room, contextWindow: 200_000, maxOutputTokens: 64_000, tokens: 118_261 - 4_800 })).toBe(false);
  });

  test("no budget thinking: room while at least 8,192 tokens of output stay", () => {
    const plain = { ...room, budgetFollowsOutput: false };
    expect(hasRoom({ ...plain, tokens: 92_912 })).toBe(true); // 110,000 - 4,096 - 8,192 - 4,800
    expect(hasRoom({ ...plain, tokens: 92_913 })).toBe(false);
  });

  test("unknown usage or window: no room", () => {
    expect(hasRoom({ ...room, tokens: null })).toBe(false);
    expect(hasRoom({ ...room, tokens: 1, contextWindow: 0 })).toBe(false);
  });

  test("budget thinking follows max_tokens only for Anthropic reasoning models without adaptive thinking, thinking on", () => {
    const claude = { api: "anthropic-messages", reasoning: true };
    expect(budgetFollowsOutput(claude, "medium")).toBe(true);
    expect(budgetFollowsOutput(claude, "off")).toBe(false);
    expect(budgetFollowsOutput({ ...claude, compat: { forceAdaptiveThinking: true } }, "high")).toBe(false);
    expect(budgetFollowsOutput({ api: "openai-responses", reasoning: true }, "high")).toBe(false);
    expect(budgetFollowsOutput(undefined, "high")).toBe(false);
  });
});

describe("decidePendingAtCompact", () => {
  test("threshold with room: cancel; without: wait, bounded", () => {
    expect(decidePendingAtCompact({ ...base, budgetFollowsOutput: false, tokens: 92_000 })).toEqual({ action: "cancel" });
    expect(decidePendingAtCompact({ ...base, tokens: 92_000 })).toEqual({ action: "wait", maxWaitMs: 60_000 });
  });

  test("the stall budget cuts the wait short at the threshold and on overflow, not for the user's /compact", () => {
    expect(decidePendingAtCompact({ ...base, tokens: 92_000, stallMs: 1_000 })).toEqual({ action: "wait", maxWaitMs: 1_000, digestAfterMs: 1_000 });
    expect(decidePendingAtCompact({ ...base, reason: "overflow", tokens: 120_000, stallMs: 0 })).toEqual({ action: "wait", maxWaitMs: 0, digestAfterMs: 0 });
    expect(decidePendingAtCompact({ ...base, reason: "manual", tokens: 92_000, stallMs: 1_000 })).toEqual({ action: "wait", maxWaitMs: 60_000 });
    // A stall budget at or past the wait bound: the wait as it was (Pi compacts on its own at its end).
    expect(decidePendingAtCompact({ ...base, tokens: 92_000, stallMs: 60_000 })).toEqual({ action: "wait", maxWaitMs: 60_000 });
  });

  test("custom instructions fall back; waiting disabled falls back", () => {
    expect(decidePendingAtCompact({ ...base, tokens: 40_000, customInstructions: true })).toEqual({ action: "fallback", why: "custom_instructions" });
    expect(decidePendingAtCompact({ ...base, tokens: 106_000, maxWaitMs: 0 })).toEqual({ action: "fallback", why: "no_wait" });
  });

  test("property: an overflow or a manual compaction is never cancelled; a cancel always leaves the margin", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("manual" as const, "threshold" as const, "overflow" as const),
        fc.option(fc.integer({ min: 0, max: 300_000 }), { nil: null }),
        fc.integer({ min: 1, max: 300_000 }),
        fc.integer({ min: 0, max: 50_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 100_000 }),
        fc.boolean(),
        fc.integer({ min: -1, max: 120_000 }),
        (reason, tokens, contextWindow, maxTurnGrowth, maxWaitMs, customInstructions, maxOutputTokens, budgetFollows, stallMs) => {
          const d = decidePendingAtCompact({ reason, tokens, contextWindow, maxTurnGrowth, maxWaitMs, customInstructions, maxOutputTokens, budgetFollowsOutput: budgetFollows, stallMs });
          if (d.action === "cancel") {
            expect(reason).toBe("threshold");
            const next = tokens! + roomMargin(maxTurnGrowth);
            expect(next).toBeLessThanOrEqual(contextWindow);
            expect(outputRoom(next, contextWindow)).toBeGreaterThanOrEqual(budgetFollows ? maxOutputTokens : Math.min(maxOutputTokens, 8_192));
          }
          if (d.action === "wait") {
            // Never longer than the wait bound; a digest only in Pi's own compactions, after the stall budget.
            expect(d.maxWaitMs).toBe(d.digestAfterMs ?? maxWaitMs);
            expect(d.maxWaitMs).toBeLessThanOrEqual(maxWaitMs);
            if (d.digestAfterMs !== undefined) {
              expect(reason).not.toBe("manual");
              expect(d.digestAfterMs).toBe(stallMs);
            }
          }
        },
      ),
    );
  });
});

describe("shouldAbortAndCompact", () => {
  // Window 100k, reserve 10k, 2k a turn, no budget thinking: room up to 100,000 - 4,096 - 8,192 - 4,000 = 83,712.
  const live = { isIdle: false, hasPendingMessages: false, hasAbortSignal: true, contextWindow: 100_000, reserveTokens: 10_000, maxTurnGrowth: 2_000, maxOutputTokens: 16_384, budgetFollowsOutput: false, alreadyTriedForJob: false };
  test("only over the hard threshold with no room for another turn", () => {
    expect(shouldAbortAndCompact({ ...live, tokens: 89_000 })).toBe(false); // below the hard threshold
    expect(shouldAbortAndCompact({ ...live, tokens: 95_000 })).toBe(true);
    expect(shouldAbortAndCompact({ ...live, tokens: 95_000, contextWindow: 200_000, reserveTokens: 105_000 })).toBe(false); // room: waits for the turn end
  });
  test("never when idle, queued, unabortable, already tried, or usage unknown", () => {
    for (const patch of [{ isIdle: true }, { hasPendingMessages: true }, { hasAbortSignal: false }, { alreadyTriedForJob: true }, { tokens: null }]) {
      expect(shouldAbortAndCompact({ ...live, tokens: 99_000, ...patch })).toBe(false);
    }
  });
});
