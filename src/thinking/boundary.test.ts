import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { assistantTimestampsAtFlush, boundaryAtFlush, boundaryForRender, computeThinkingBoundary } from "./boundary.ts";
import { stripOldThinking } from "./strip.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { Clock, assistantsOf, history, stampsWithThinking } from "../../test/support/thinking/conversation.ts";

const TS = [10, 20, 30, 40, 50];

describe("computeThinkingBoundary", () => {
  test("count <= keep returns prev unchanged", () => {
    expect(computeThinkingBoundary(TS, 5)).toBeUndefined();
    expect(computeThinkingBoundary(TS, 16, 7)).toBe(7);
    expect(computeThinkingBoundary([], 1, null)).toBeUndefined();
  });

  test("count > keep returns the timestamp of the oldest of the last keep assistants", () => {
    // count 5, keep 2: index 5 - 2 = 3, timestamp 40; 10, 20, 30 are older and get stripped
    expect(computeThinkingBoundary(TS, 2)).toBe(40);
    expect(computeThinkingBoundary(TS, 4)).toBe(20);
  });

  test("keepLastTurns = 0 is clamped to 1 (no out-of-bounds index)", () => {
    // keep 1: index 5 - 1 = 4, timestamp 50 (unclamped it would read TS[5] = undefined)
    expect(computeThinkingBoundary(TS, 0)).toBe(50);
    expect(computeThinkingBoundary(TS, -2)).toBe(50);
  });

  test("monotonic: raising keepLastTurns never moves the boundary back", () => {
    const at2 = computeThinkingBoundary(TS, 2); // 40
    // keep 4 alone would give 20; the previous 40 wins
    expect(computeThinkingBoundary(TS, 4, at2)).toBe(40);
  });

  test("lowering keepLastTurns moves it forward", () => {
    expect(computeThinkingBoundary(TS, 1, computeThinkingBoundary(TS, 3))).toBe(50);
  });

  test("prev is ignored when the candidate is newer", () => {
    expect(computeThinkingBoundary(TS, 2, 15)).toBe(40);
    expect(computeThinkingBoundary(TS, 2, null)).toBe(40);
  });

  test("property: never below prev, and either prev or one of the timestamps", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 40 }).map((a) => a.sort((x, y) => x - y)),
        fc.integer({ min: -2, max: 50 }),
        fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
        (stamps, keep, prev) => {
          const b = computeThinkingBoundary(stamps, keep, prev);
          if (prev !== undefined) expect(b).toBeGreaterThanOrEqual(prev);
          expect(b === prev || (b !== undefined && stamps.includes(b))).toBe(true);
        },
      ),
    );
  });
});

describe("boundaryAtFlush", () => {
  const branch = (): ContextMessage[] => [
    user("q", 5),
    assistant([thinking("a"), text("x")], 10),
    user("q", 15),
    assistant([thinking("b"), text("y")], 20),
    user("q", 25),
    assistant([thinking("c"), text("z")], 30),
  ];

  test("the not-yet-persisted closing assistant message is counted", () => {
    const closing = assistant([thinking("d"), text("w")], 40);
    // branch alone: 3 assistants, keep 3: nothing to strip yet
    expect(boundaryAtFlush({ branchMessages: branch(), keepLastTurns: 3 })).toBeUndefined();
    // with the closing message: 4 assistants [10, 20, 30, 40], keep 3: index 1, timestamp 20
    expect(boundaryAtFlush({ branchMessages: branch(), closingMessage: closing, keepLastTurns: 3 })).toBe(20);
  });

  test("a closing message already in the branch is not counted twice", () => {
    const b = branch();
    const closing = b[b.length - 1]!;
    expect(assistantTimestampsAtFlush(b, closing)).toEqual([10, 20, 30]);
    expect(boundaryAtFlush({ branchMessages: b, closingMessage: closing, keepLastTurns: 2 })).toBe(20);
  });

  test("a closing message that is not an assistant message is ignored", () => {
    expect(assistantTimestampsAtFlush(branch(), result("c1", "read", "ok", 35))).toEqual([10, 20, 30]);
    expect(assistantTimestampsAtFlush(branch(), user("later", 36))).toEqual([10, 20, 30]);
  });

  test("prev is carried through and clamps", () => {
    expect(boundaryAtFlush({ branchMessages: branch(), keepLastTurns: 16, prev: 12 })).toBe(12);
    expect(boundaryAtFlush({ branchMessages: branch(), keepLastTurns: 1, prev: 25 })).toBe(30);
  });

  test("at the first render after a flush exactly keepLastTurns assistants keep their thinking", () => {
    const clock = new Clock();
    const raw = history(clock, 10, 1); // 20 assistants, distinct timestamps
    const nextPrompt = user("next request", clock.next()); // closes the last cycle
    for (const keep of [1, 4, 8, 16]) {
      const boundary = boundaryAtFlush({ branchMessages: raw, keepLastTurns: keep });
      const out = stripOldThinking([...raw, nextPrompt], { enabled: true, keepLastTurns: keep }, boundary);
      expect(stampsWithThinking(out)).toEqual(assistantsOf(raw).slice(-keep).map((m) => m.timestamp));
    }
  });
});

describe("boundaryForRender", () => {
  test("a persisted boundary is used as is", () => {
    expect(boundaryForRender({ persisted: 40, hasFlushed: true })).toBe(40);
    expect(boundaryForRender({ persisted: 40, hasFlushed: false })).toBe(40);
  });

  test("no boundary after a flush means strip nothing; before any flush, the live count", () => {
    expect(boundaryForRender({ persisted: undefined, hasFlushed: true })).toBe(Number.NEGATIVE_INFINITY);
    expect(boundaryForRender({ persisted: null, hasFlushed: false })).toBeUndefined();
    const msgs = history(new Clock(), 6, 0);
    const cfg = { enabled: true, keepLastTurns: 1 };
    expect(stripOldThinking(msgs, cfg, boundaryForRender({ persisted: undefined, hasFlushed: true }))).toBe(msgs);
    expect(stripOldThinking(msgs, cfg, boundaryForRender({ persisted: undefined, hasFlushed: false }))).not.toBe(msgs);
  });
});
