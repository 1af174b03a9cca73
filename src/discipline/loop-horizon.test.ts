/** The running loop's expected remaining requests: Lindy blended with the session's finished loops. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { expectedRemainingSteps, loopExpectedRequests, loopShapeOf } from "./loop-horizon.ts";

/** A prompt and `steps` tool steps from `ts` on; `answered`: a final text answer after them. */
function loop(ts: number, steps: number, answered: boolean): ContextMessage[] {
  const out: ContextMessage[] = [user(`p${ts}`, ts)];
  for (let i = 0; i < steps; i++) out.push(assistant([call(`c${ts}_${i}`, "read", { path: "a.ts" })], ts + 1 + 2 * i), result(`c${ts}_${i}`, "read", "x", ts + 2 + 2 * i));
  if (answered) out.push(assistant([text("done")], ts + 1 + 2 * steps));
  return out;
}

describe("loopShapeOf", () => {
  test("the running loop's steps and the earlier loops' step counts", () => {
    const branch = [...loop(100, 3, true), ...loop(200, 7, true), ...loop(300, 4, false)];
    const shape = loopShapeOf(branch);
    expect(shape.running).toBe(true);
    expect(shape.pastLoopSteps).toEqual([3, 7]);
    expect(shape.stepIndices).toHaveLength(4);
    expect(branch[shape.loopStart - 1]).toMatchObject({ role: "user", timestamp: 300 });
  });

  test("a branch that ends with an answer, or with a prompt, is not in a running loop", () => {
    expect(loopShapeOf(loop(100, 3, true)).running).toBe(false);
    expect(loopShapeOf([...loop(100, 3, true), user("next", 500)]).running).toBe(false);
    expect(loopShapeOf([]).running).toBe(false);
  });
});

describe("expectedRemainingSteps", () => {
  test("no finished loop: the Lindy prior, half the steps made so far (two loops in three go on that much longer)", () => {
    expect(expectedRemainingSteps({ stepsSoFar: 12, pastLoopSteps: [], cap: 30 })).toBe(6);
    expect(loopExpectedRequests({ stepsSoFar: 12, pastLoopSteps: [], cap: 30 })).toBe(7);
  });

  test("the session's loops: one at least as long says how much longer it went on, one that ended earlier says loops end around now", () => {
    // Loops of 100, 80 and 12 steps, the current one at 20: (80 + 60 + 0 + 10) / 4.
    expect(expectedRemainingSteps({ stepsSoFar: 20, pastLoopSteps: [100, 80, 12], cap: 1000 })).toBe(37.5);
    // Every earlier loop was shorter: the prior shrinks toward 0.
    expect(expectedRemainingSteps({ stepsSoFar: 20, pastLoopSteps: [5, 9], cap: 1000 })).toBeCloseTo(10 / 3, 9);
    // Short loops that ended where the current one is: (0 + 0 + 5) / 3.
    expect(expectedRemainingSteps({ stepsSoFar: 10, pastLoopSteps: [10, 10], cap: 1000 })).toBeCloseTo(5 / 3, 9);
  });

  test("capped at the gate's horizon cap", () => {
    expect(expectedRemainingSteps({ stepsSoFar: 100, pastLoopSteps: [], cap: 30 })).toBe(30);
  });

  test("property: within [0, cap], and never above the longest of the prior and what an earlier loop went on", () => {
    fc.assert(
      fc.property(fc.nat(300), fc.array(fc.nat(300), { maxLength: 8 }), fc.nat(100), (k, past, cap) => {
        const r = expectedRemainingSteps({ stepsSoFar: k, pastLoopSteps: past, cap });
        expect(r).toBeGreaterThanOrEqual(0);
        expect(r).toBeLessThanOrEqual(cap);
        expect(r).toBeLessThanOrEqual(Math.max(k / 2, ...past.map((l) => l - k)) + 1e-9);
      }),
    );
  });
});
