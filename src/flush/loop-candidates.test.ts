/**
 * What a flush inside the running loop could prune, estimated at a turn end, and capture's "recent"
 * skip: the loop's last `keepRecentSteps` steps (2 by default) stay raw while it runs, never once
 * it has ended.
 */
import { describe, expect, test } from "bun:test";
import { loopShapeOf } from "../discipline/loop-horizon.ts";
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../prune/config.ts";
import type { ContextMessage } from "../session/messages.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { captureBatches } from "./capture.ts";
import { loopCandidates, recentStepsFrom, STUB_TOKENS_ESTIMATE } from "./loop-candidates.ts";

const big = (tag: string, chars = 8000) => `${tag}\n`.repeat(Math.ceil(chars / (tag.length + 1))).slice(0, chars);

/** A running loop: prompt, then one read per id (the last one not answered by the model yet). */
function running(ids: string[], tool = "read"): ContextMessage[] {
  const out: ContextMessage[] = [user("go", 1)];
  ids.forEach((id, i) => out.push(assistant([thinking(`why ${id}`), call(id, tool, { path: `${id}.ts` })], 10 + 2 * i), result(id, tool, big(id), 11 + 2 * i)));
  return out;
}

const candidatesOf = (messages: ContextMessage[], state: KeeperState = emptyState(), config: PruneConfig = DEFAULT_PRUNE_CONFIG) =>
  loopCandidates({ messages, shape: loopShapeOf(messages), state, config });

describe("loopCandidates", () => {
  test("the loop's older outputs, not its last two steps'", () => {
    const messages = running(["a", "b", "c", "d", "e"]);
    const c = candidatesOf(messages);
    expect(c.outputs).toBe(3);
    expect(c.position).toBe(2); // a's result
    expect(c.tokensRemoved).toBe(3 * (2000 - STUB_TOKENS_ESTIMATE));
    expect(recentStepsFrom(loopShapeOf(messages), 2, messages.length)).toBe(7); // d's call
    expect(recentStepsFrom(loopShapeOf(messages), 3, messages.length)).toBe(5); // c's call
  });

  test("outputs already stubbed, protected, recall copies and trivial batches are not candidates", () => {
    const messages = running(["a", "b", "c", "d", "e"]);
    const stubbed: KeeperState = { ...emptyState(), frontier: { ...emptyState().frontier, stubbedKeys: ["a@10#0"] } };
    expect(candidatesOf(messages, stubbed).outputs).toBe(2);
    expect(candidatesOf(messages, emptyState(), { ...DEFAULT_PRUNE_CONFIG, protectedTools: ["read"] }).outputs).toBe(0);
    expect(candidatesOf(running(["a", "b", "c", "d", "e"], "keeper_recall")).outputs).toBe(0);
    expect(candidatesOf(messages, emptyState(), { ...DEFAULT_PRUNE_CONFIG, minBatchChars: 9000 }).outputs).toBe(0);
  });

  test("outside a running loop, or with pruning off, nothing", () => {
    const ended = [...running(["a", "b", "c", "d", "e"]), assistant([text("done")], 50)];
    expect(candidatesOf(ended).outputs).toBe(0);
    expect(candidatesOf(running(["a", "b", "c", "d", "e"]), emptyState(), { ...DEFAULT_PRUNE_CONFIG, enabled: false }).outputs).toBe(0);
  });
});

describe("capture inside a running loop", () => {
  test("the last two steps are skipped (the last one as unseen, the one before as recent); at the final answer they are captured", () => {
    const messages = running(["a", "b", "c", "d", "e"]);
    const inLoop = captureBatches({ branchMessages: messages, state: emptyState(), config: DEFAULT_PRUNE_CONFIG });
    expect(inLoop.batches.map((b) => b.batchKey)).toEqual(["batch:a@10", "batch:b@12", "batch:c@14"]);
    expect(inLoop.skipped).toEqual([
      { batchKey: "batch:d@16", reason: "recent" },
      { batchKey: "batch:e@18", reason: "unseen" },
    ]);
    const three = { ...DEFAULT_PRUNE_CONFIG, loopFlush: { ...DEFAULT_PRUNE_CONFIG.loopFlush, keepRecentSteps: 3 } };
    expect(captureBatches({ branchMessages: messages, state: emptyState(), config: three }).batches.map((b) => b.batchKey)).toEqual(["batch:a@10", "batch:b@12"]);
    const ended = captureBatches({ branchMessages: messages, closingMessage: assistant([text("done")], 50), state: emptyState(), config: DEFAULT_PRUNE_CONFIG });
    expect(ended.batches).toHaveLength(5);
  });

  test("keepRecentSteps 1: only the unseen step stays raw (the budget flush's old rule)", () => {
    const config = { ...DEFAULT_PRUNE_CONFIG, loopFlush: { ...DEFAULT_PRUNE_CONFIG.loopFlush, keepRecentSteps: 1 } };
    const inLoop = captureBatches({ branchMessages: running(["a", "b", "c"]), state: emptyState(), config });
    expect(inLoop.batches.map((b) => b.batchKey)).toEqual(["batch:a@10", "batch:b@12"]);
  });
});
