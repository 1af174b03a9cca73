/**
 * The flush gate over small branches: what applies, what waits and why, and the frozen
 * boundary it persists. Exact gate arithmetic is in test/unit/discipline/gate*.test.ts; here
 * the figures only have to be far apart.
 */
import { describe, expect, test } from "bun:test";
import type { DisciplineFacts } from "./decide.ts";
import { finishFlush } from "./flush.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState, FlushRecordSchema, type KeeperState } from "../state/schema.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const TTL = 5 * 60_000;
const settings: KeeperSettings = { ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, budgetTrigger: { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false } } };

const lines = (tag: string, chars: number): string => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `${tag} line ${i} `.padEnd(39, ".")).join("\n").slice(0, chars);
const summary = (batchKey: string, t: string): BatchSummary => ({ batchKey, text: t, source: "model", inputTokens: 10, outputTokens: 5, cost: 0 });

/** A read of `chars` characters: assistant call at ts, result at ts + 1. */
function read(id: string, ts: number, chars: number): ContextMessage[] {
  return [assistant([call(id, "read", { path: `${id}.ts` })], ts), result(id, "read", lines(id, chars), ts + 1)];
}

/** Text-only prompts and answers of `chars` characters each (history nothing can prune). */
function chatter(fromTs: number, pairs: number, chars: number): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (let i = 0; i < pairs; i++) out.push(user(lines(`q${i}`, chars), fromTs + 2 * i), assistant([text(lines(`a${i}`, chars))], fromTs + 2 * i + 1));
  return out;
}

function facts(over: Partial<DisciplineFacts> = {}): DisciplineFacts {
  // 20 requests 10 s apart: every gap warm.
  return { requestTimes: Array.from({ length: 20 }, (_, i) => i * 10_000), cold: false, ttl: "5m", ttlMs: TTL, seamActive: false, ...over };
}

function flush(branch: ContextMessage[], summaries: BatchSummary[], f: DisciplineFacts, state: KeeperState = emptyState()) {
  const done = finishFlush({ state, branchMessages: branch, settings, model: MODEL, summaries, now: 1_000_000, discipline: { cache: settings.cache, facts: f, label: "test flush" } });
  return { plan: done.plan, outcome: done.outcome! };
}

describe("the flush gate (finishFlush with cache discipline)", () => {
  // One early read of 2,000 chars, then ~100k tokens of chatter, then the final answer.
  const deep: ContextMessage[] = [user("look at a.ts", 1), ...read("a", 2, 2000), assistant([text("a.ts is fine")], 4), ...chatter(10, 25, 16_000), assistant([text("done")], 100)];
  const deepSummaries = [summary("batch:a@2", "a.ts: a small module")];

  test("warm: a small stub deep in history does not pay for re-writing everything after it", () => {
    const { plan, outcome } = flush(deep, deepSummaries, facts());
    expect(outcome.verdicts["stub:a@2#0"]).toBe("deferred");
    expect(plan.nextState.frontier.stubbedKeys).toEqual([]);
    expect(plan.decisions).toContainEqual({ kind: "deferred", what: "stub", key: "a@2#0" });
    expect(outcome.log).toHaveLength(1);
    const n = outcome.log[0]!.decision.numbers;
    expect(outcome.log[0]!.decision.reason).toBe("defers");
    expect(n.rewrittenTokens).toBeGreaterThan(90_000); // nothing readable before it: everything after the system is re-written
    expect(n.tokensRemoved).toBeGreaterThan(100);
    expect(n.tokensRemoved).toBeLessThan(500);
    // the summary is kept, so the stub is proposed again at the next flush
    expect(plan.nextState.summaries["batch:a@2"]).toBeDefined();
    expect(outcome.pending).toBeDefined();
  });

  test("cold: the same flush applies (the rewrite is free)", () => {
    const { plan, outcome } = flush(deep, deepSummaries, facts({ cold: true }));
    expect(outcome.verdicts["stub:a@2#0"]).toBe("pays-alone");
    expect(plan.nextState.frontier.stubbedKeys).toEqual(["a@2#0"]);
    expect(outcome.log[0]!.decision.reason).toBe("cold-cache");
    expect(outcome.log[0]!.decision.numbers.rewriteCost).toBe(0);
    expect(outcome.pending).toBeUndefined();
  });

  test("warm: big outputs of the loop that just ended pay on their own (their rewrite is short and within the lookback)", () => {
    const branch = [user("read b and c", 1), ...read("b", 2, 40_000), ...read("c", 4, 40_000), assistant([text("both read")], 6)];
    const { plan, outcome } = flush(branch, [summary("batch:b@2", "b.ts"), summary("batch:c@4", "c.ts")], facts());
    expect(plan.nextState.frontier.stubbedKeys.sort()).toEqual(["b@2#0", "c@4#0"]);
    expect(outcome.log[0]!.decision.reason).toBe("pays");
    expect(outcome.log[0]!.decision.numbers.net).toBeGreaterThan(0);
  });

  test("persists the frozen boundary on the grid and holds it between grid steps", () => {
    const { plan, outcome } = flush(deep, deepSummaries, facts());
    expect(outcome.boundary?.moved).toBe(true);
    const ts = plan.nextState.frontier.frozenThroughTimestamp;
    expect(ts).toBeDefined();
    const [entry] = plan.entriesToPersist;
    expect(FlushRecordSchema.parse(entry!.data).frontier!.frozenThroughTimestamp).toBe(ts);
    // Same branch again: the boundary holds, nothing new to persist for it.
    const again = flush(deep, [], facts(), plan.nextState);
    expect(again.outcome.boundary?.moved).toBe(false);
    expect(again.plan.nextState.frontier.frozenThroughTimestamp).toBe(ts);
  });

  test("persists the seam point: before the chain the next flush collapses, else through the end of the branch", () => {
    const branch = [user("read b and c", 1), ...read("b", 2, 40_000), ...read("c", 4, 40_000), assistant([text("both read")], 6)];
    const sums = [summary("batch:b@2", "b.ts"), summary("batch:c@4", "c.ts")];
    // rollingWindow 0 (the default): this flush collapses the chain itself; nothing else is due, the seam covers the whole branch.
    const now = flush(branch, sums, facts());
    expect(now.plan.nextState.frontier.compressedChains).toHaveLength(1);
    expect(now.outcome.seamThroughTimestamp).toBe(6);
    const [entry] = now.plan.entriesToPersist;
    expect(FlushRecordSchema.parse(entry!.data).frontier!.seamThroughTimestamp).toBe(6);
    // rollingWindow 1: the chain collapses at the next flush, so the seam stops at the prompt before it.
    const later: KeeperSettings = { ...settings, pruning: { ...settings.pruning, chainCompression: { ...settings.pruning.chainCompression, rollingWindow: 1 } } };
    const done = finishFlush({ state: emptyState(), branchMessages: branch, settings: later, model: MODEL, summaries: sums, now: 1_000_000, discipline: { cache: later.cache, facts: facts(), label: "test flush" } });
    expect(done.plan.nextState.frontier.compressedChains).toHaveLength(0);
    expect(done.outcome!.seamThroughTimestamp).toBe(1);
    expect(done.plan.nextState.frontier.seamThroughTimestamp).toBe(1);
  });

  test("frozen history waits while warm and between grid steps, and goes on a cold cache", () => {
    // State: the boundary already sits after the read (frozen through ts 4), nothing applied.
    const first = flush(deep, deepSummaries, facts());
    const frozenState: KeeperState = { ...first.plan.nextState, frontier: { ...first.plan.nextState.frontier, frozenThroughTimestamp: 101 } };
    const more = [...deep, user("one more", 102), assistant([text("ok")], 103)];
    const warm = flush(more, [], facts({ seamActive: true }), frozenState);
    expect(warm.outcome.boundary?.moved).toBe(false);
    expect(warm.outcome.verdicts["stub:a@2#0"]).toBe("frozen");
    expect(warm.plan.nextState.frontier.stubbedKeys).toEqual([]);
    const cold = flush(more, [], facts({ cold: true }), frozenState);
    expect(cold.plan.nextState.frontier.stubbedKeys).toEqual(["a@2#0"]);
  });

  test("a budget flush inside a running loop prices the loop's earlier results like any other", () => {
    // The branch ends with a tool result: the loop is still running. Render stubs its earlier
    // results at once, so the stub of d changes the next request and is priced (and pays: it is
    // within the lookback and removes most of what it re-writes, over the loop's expected
    // remaining requests). g and e are the loop's last two steps (e not answered yet): never
    // captured, never proposed.
    const branch = [user("read d", 1), ...read("d", 2, 40_000), ...read("f", 4, 300), ...read("g", 6, 300), ...read("e", 8, 40_000)];
    const { plan, outcome } = flush(branch, [summary("batch:d@2", "d.ts")], facts());
    expect(outcome.verdicts["stub:d@2#0"]).toBe("pays-alone");
    expect(plan.nextState.frontier.stubbedKeys).toEqual(["d@2#0"]);
    // N is the loop's: 4 steps so far, no earlier loop, so the prior's 2 more and the final answer.
    expect(outcome.expectedRequests).toBe(3);
    // The seam serves the loop's next flush: right before its recent steps (g's call at ts 6), so
    // the next rewrite inside the loop reads everything up to f's output back.
    expect(outcome.boundary?.frozenThroughTimestamp).toBeDefined();
    expect(outcome.seamThroughTimestamp).toBe(5);
    // Without the in-loop trigger, rollingWindow 0: the loop's own chain collapses at its final answer, so the seam stops at its prompt.
    const off: KeeperSettings = { ...settings, pruning: { ...settings.pruning, loopFlush: { ...settings.pruning.loopFlush, enabled: false } } };
    const done = finishFlush({ state: emptyState(), branchMessages: branch, settings: off, model: MODEL, summaries: [summary("batch:d@2", "d.ts")], now: 1_000_000, discipline: { cache: off.cache, facts: facts(), label: "test flush" } });
    expect(done.outcome!.seamThroughTimestamp).toBe(1);
  });

  test("inside a running loop the gate counts the loop's requests, not the session's", () => {
    // 5 steps so far: the prior's 2.5 more and the final answer, against ~18 session requests.
    // Stubbing d (6,000 chars) re-writes the four 12,000-char steps after it: that pays over the
    // session's horizon, not over the loop's.
    const branch = [user("read", 1), ...read("d", 2, 6000), ...read("f", 4, 12_000), ...read("g", 6, 12_000), ...read("h", 8, 12_000), ...read("e", 10, 12_000)];
    const inLoop = flush(branch, [summary("batch:d@2", "d.ts"), summary("batch:f@4", "f.ts")], facts());
    expect(inLoop.outcome.expectedRequests).toBe(3.5);
    expect(inLoop.outcome.verdicts["stub:d@2#0"]).toBe("deferred");
    // With chains kept past the loop's end (rollingWindow 1) a stub is read by the session's later requests too.
    const later: KeeperSettings = { ...settings, pruning: { ...settings.pruning, chainCompression: { ...settings.pruning.chainCompression, rollingWindow: 1 } } };
    const kept = finishFlush({ state: emptyState(), branchMessages: branch, settings: later, model: MODEL, summaries: [summary("batch:d@2", "d.ts"), summary("batch:f@4", "f.ts")], now: 1_000_000, discipline: { cache: later.cache, facts: facts(), label: "test flush" } });
    expect(kept.outcome!.expectedRequests).toBeGreaterThan(15);
    expect(kept.outcome!.verdicts["stub:d@2#0"]).not.toBe("deferred");
  });

  test("a loop's chain collapses at its final answer even when a flush inside the loop froze history into it", () => {
    // A flush inside the loop (at d's turn end) moves the frozen boundary to the end of the branch then.
    const loop = [user("rework", 1), ...read("a", 2, 40_000), ...read("b", 4, 40_000), ...read("c", 6, 2_000), ...read("d", 8, 2_000), ...read("e", 10, 2_000)];
    const inLoop = flush(loop, [summary("batch:a@2", "a.ts"), summary("batch:b@4", "b.ts")], facts());
    const frozenAt = inLoop.plan.nextState.frontier.frozenThroughTimestamp;
    expect(frozenAt).toBeDefined();
    expect(frozenAt!).toBeGreaterThan(1);
    // Two small steps later the loop ends: too little growth for a grid step, so the boundary holds.
    const ended = [...loop, ...read("f", 12, 500), ...read("g", 14, 500), assistant([text("reworked")], 16)];
    const end = flush(ended, ["c", "d", "e"].map((id) => summary(`batch:${id}@${{ c: 6, d: 8, e: 10 }[id]}`, `${id}.ts`)), facts(), inLoop.plan.nextState);
    expect(end.outcome.boundary?.moved).toBe(false);
    // The loop's own chain is not frozen by it: it collapses at its final answer, as rollingWindow 0 says.
    expect(end.plan.nextState.frontier.compressedChains).toHaveLength(1);
  });

  test("an output the model has not answered yet is never hidden, not even as a duplicate of a summarized one", () => {
    // y repeats x byte for byte; the branch ends with y's result (a budget flush at turn_end).
    const x = read("x", 2, 40_000);
    const y = [assistant([call("y", "read", { path: "x.ts" })], 4), result("y", "read", lines("x", 40_000), 5)];
    const state = flush([user("read x twice", 1), ...x, assistant([text("x read")], 3.5)], [summary("batch:x@2", "x.ts")], facts({ cold: true })).plan.nextState;
    const { plan, outcome } = flush([user("read x twice", 1), ...x, assistant([text("x read")], 3.5), user("again", 3.7), ...y], [], facts({ cold: true }), state);
    // Capture never proposes it (the discipline would hold it back as "unseen" if it did).
    expect(outcome.verdicts["alias:y@4#0"] ?? "unseen").toBe("unseen");
    expect(plan.nextState.frontier.aliases).toEqual({});
  });
});
