import { describe, expect, test } from "bun:test";
import { emptyObservedLosses, laterLossChance, lossChance, observedLossesInHistory, recordObservation } from "./observed-loss.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

const MIN = 60_000;
function withUsage(m: ContextMessage, input: number, cacheRead: number, cacheWrite: number): ContextMessage {
  return { ...m, usage: { input, output: 10, cacheRead, cacheWrite, totalTokens: input + cacheRead + cacheWrite + 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } } as ContextMessage;
}

describe("observed cache losses", () => {
  test("counts losses by kind: a prompt request that read less than half the previous prompt, within the TTL", () => {
    const history: ContextMessage[] = [
      user("p1", 0),
      withUsage(assistant([call("a", "read")], 1 * MIN), 10, 0, 5000), // first request: nothing to compare
      result("a", "read", "x", 1 * MIN + 1),
      withUsage(assistant([text("done")], 2 * MIN), 10, 5000, 800), // loop request, read all: kept
      user("p2", 3 * MIN),
      withUsage(assistant([text("ok")], 4 * MIN), 10, 0, 6000), // prompt request, read 0 < 0.5 × 5,810: lost
      user("p3", 20 * MIN),
      withUsage(assistant([text("ok")], 21 * MIN), 10, 0, 7000), // 17 min later: TTL explains it, not counted
      user("p4", 22 * MIN),
      withUsage(assistant([text("ok")], 23 * MIN), 10, 6900, 200), // prompt request, read: kept
    ];
    const o = observedLossesInHistory(history, 5 * MIN);
    expect(o).toEqual({ prompt: { requests: 2, losses: 1 }, loop: { requests: 1, losses: 0 } });
    // (1 + 1) / (2 + 2) = 0.5; loop (0 + 1) / (1 + 2) = 1/3; later (1 + 1) / (3 + 10) = 2/13
    expect(lossChance(o.prompt)).toBeCloseTo(0.5, 12);
    expect(lossChance(o.loop)).toBeCloseTo(1 / 3, 12);
    expect(laterLossChance(o)).toBeCloseTo(2 / 13, 12);
  });
  test("the reducer adds one observation", () => {
    const o = recordObservation(recordObservation(emptyObservedLosses(), "loop", false), "loop", true);
    expect(o.loop).toEqual({ requests: 2, losses: 1 });
    expect(o.prompt).toEqual({ requests: 0, losses: 0 });
    // no data: prompt (0 + 1) / (0 + 2) = 0.5; later (1 + 1) / (2 + 10) = 1/6
    expect(lossChance(o.prompt)).toBe(0.5);
    expect(laterLossChance(o)).toBeCloseTo(1 / 6, 12);
  });
});
