import { describe, expect, test } from "bun:test";
import { type BoundaryHook, planFlush } from "./plan.ts";
import { pairToolCalls } from "../prune/occurrence.ts";
import { renderContext } from "../prune/pipeline.ts";
import { restoreState } from "../state/entries.ts";
import { emptyState, type FlushRecord } from "../state/schema.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { FILE_A, branch, closing, flushConfig, summary } from "../../test/support/flush/session.ts";

const summaries = [
  summary("batch:a@10", "a.ts: 160 identical lines"),
  summary("batch:a2@31", "a.ts again"),
  summary("batch:c@33", "c.ts raw", "raw"),
];

/** keepLastTurns = 2 stand-in for the thinking helper's computeThinkingBoundary. */
const keepLast2 = ({ assistantTimestamps, previous }: { assistantTimestamps: number[]; previous: number | undefined }) =>
  assistantTimestamps.length <= 2 ? previous : Math.max(previous ?? -Infinity, assistantTimestamps[assistantTimestamps.length - 2]);

function firstFlush(hooks?: BoundaryHook[]) {
  return planFlush({
    state: emptyState(),
    branchMessages: branch(),
    closingMessage: closing,
    summaries,
    config: flushConfig,
    now: 5000,
    thinkingBoundary: keepLast2,
    boundaryHooks: hooks,
  });
}

describe("planFlush", () => {
  test("stubs summarized batches, keeps raw ones, purges cooled-down errors, compresses old closed chains", () => {
    const plan = firstFlush();
    const f = plan.nextState.frontier;
    expect(f.flushSeq).toBe(1);
    expect(f.lastFlushAt).toBe(5000);
    expect(f.stubbedKeys).toEqual(["a@10#0", "ls@10#0", "a2@31#0"]);
    // e@21: assistants after it = 23, 25, 31, 33, 35 (closing) = 5 >= cooldown 2
    expect(f.purgedErrorKeys).toEqual(["e@21#0"]);
    // cycle 1 holds the protected .env read; cycle 2 (trivial batches, 1 prompt after) collapses; cycle 3 is open
    expect(f.compressedChains.map((c) => c.chainKey)).toEqual(["chain:batch:e@21"]);
    const chain = f.compressedChains[0];
    expect(chain).toMatchObject({ fromTimestamp: 21, toTimestamp: 24, firstCallKey: "e@21#0", messageCount: 4, memberKeys: ["e@21#0", "b@23#0"], summaryRefs: [] });
    expect(chain.text).toContain("- edit(path=b.ts, oldText=zzz) (failed) ref=e@21#0");
    expect(chain.text).toContain("- read(path=b.ts) ref=b@23#0");
    // 8 assistant timestamps 10,14,21,23,25,31,33,35 -> the second to last is 33
    expect(f.thinkingStripBoundaryTimestamp).toBe(33);
    expect(plan.decisions).toContainEqual({ kind: "keep-raw", batchKey: "batch:c@33" });
    expect(plan.decisions).toContainEqual({ kind: "thinking-boundary", from: undefined, to: 33 });
    expect(Object.keys(plan.nextState.summaries).sort()).toEqual(["batch:a2@31", "batch:a@10", "batch:c@33"]);
  });

  test("stats: counts, summarizer usage and a savings estimate", () => {
    const s = firstFlush().nextState.stats;
    expect(s).toMatchObject({
      flushes: 1,
      rewritesCaused: 1,
      stubbedResults: 3,
      purgedErrors: 1,
      compressedChains: 1,
      summarizerInputTokens: 300, // 3 x 100
      summarizerOutputTokens: 60, // 3 x 20
    });
    expect(s.summarizerCost).toBeCloseTo(0.03, 10);
    // Two 2080-char reads become ~150-char stubs: at least (2 x 2080 - 2 x 300) / 4 = 890 tokens.
    expect(s.tokensSavedEstimate).toBeGreaterThanOrEqual(890);
    expect(s.tokensSavedEstimate).toBeLessThan(2 * 2080);
  });

  test("entries to persist restore to the same state", () => {
    const plan = firstFlush();
    // One flush entry: its three summaries, the frontier (a checkpoint: the branch's first) and the stats.
    expect(plan.entriesToPersist.map((e) => e.customType)).toEqual(["context-keeper/flush"]);
    const record = plan.entriesToPersist[0]!.data as FlushRecord;
    expect(record.summaries).toHaveLength(3);
    expect(record.frontier).toEqual(plan.nextState.frontier);
    expect(record.stats).toEqual(plan.nextState.stats);
    const restored = restoreState(plan.entriesToPersist.map((e) => JSON.parse(JSON.stringify({ type: "custom", ...e }))));
    expect(restored.diagnostics).toEqual([]);
    expect(restored.state).toEqual(plan.nextState);
  });

  test("nothing new: same state, nothing to persist", () => {
    const first = firstFlush();
    const again = planFlush({ state: first.nextState, branchMessages: branch(), closingMessage: closing, summaries: [], config: flushConfig, now: 6000, thinkingBoundary: keepLast2 });
    expect(again.nextState).toBe(first.nextState);
    expect(again.entriesToPersist).toEqual([]);
  });

  test("the first flush of a branch is persisted even with nothing to do (marks the branch as flushed)", () => {
    const msgs = [user("p", 1), assistant([text("hi")], 2)];
    const first = planFlush({ state: emptyState(), branchMessages: msgs, summaries: [], config: flushConfig, now: 9 });
    expect(first.nextState.frontier.flushSeq).toBe(1);
    expect(first.nextState.stats.rewritesCaused).toBe(0);
    expect(first.entriesToPersist.map((e) => e.customType)).toEqual(["context-keeper/flush"]);
    expect(first.entriesToPersist[0]!.data).toMatchObject({ summaries: [], frontier: { flushSeq: 1 }, stats: { flushes: 1 } });
    const second = planFlush({ state: first.nextState, branchMessages: msgs, summaries: [], config: flushConfig, now: 10 });
    expect(second.entriesToPersist).toEqual([]);
  });

  test("a later identical output is aliased to the summarized one, not summarized again", () => {
    const first = firstFlush();
    const more = [
      ...branch(),
      closing,
      user("p4", 40),
      assistant([call("a3", "read", { path: "a.ts" })], 41),
      result("a3", "read", FILE_A, 42),
    ];
    const plan = planFlush({ state: first.nextState, branchMessages: more, closingMessage: assistant([text("done 4")], 43), summaries: [], config: flushConfig, now: 7000 });
    expect(plan.nextState.frontier.aliases).toEqual({ "a3@41#0": "a@10#0" });
    expect(plan.decisions).toContainEqual({ kind: "alias", key: "a3@41#0", aliasOf: "a@10#0" });
  });

  test("a summary for a batch that capture does not list is reported and ignored", () => {
    const plan = planFlush({ state: emptyState(), branchMessages: branch(), summaries: [summary("batch:nope@1", "x")], config: flushConfig, now: 1 });
    expect(plan.decisions).toContainEqual({ kind: "unknown-summary", batchKey: "batch:nope@1" });
    expect(plan.nextState.summaries["batch:nope@1"]).toBeUndefined();
  });

  test("an invalid summary (e.g. NaN cost) is reported and not recorded; capture skips are reported", () => {
    const plan = planFlush({ state: emptyState(), branchMessages: branch(), summaries: [{ ...summary("batch:a@10", "x"), cost: Number.NaN }], config: flushConfig, now: 1 });
    expect(plan.decisions.some((d) => d.kind === "invalid-summary" && d.batchKey === "batch:a@10")).toBe(true);
    expect(plan.nextState.summaries["batch:a@10"]).toBeUndefined();
    expect(plan.decisions).toContainEqual({ kind: "skip", batchKey: "batch:b@23", reason: "trivial" });
  });

  test("errors younger than the cooldown are not purged (counted at the flush)", () => {
    const msgs = [user("p", 1), assistant([call("e", "edit")], 2), result("e", "edit", "fail", 3, true), assistant([text("x")], 4)];
    const plan = planFlush({ state: emptyState(), branchMessages: msgs, summaries: [], config: flushConfig, now: 1 });
    // one assistant after the failed call < cooldown 2
    expect(plan.nextState.frontier.purgedErrorKeys).toEqual([]);
    const later = planFlush({ state: emptyState(), branchMessages: [...msgs, user("q", 5)], closingMessage: assistant([text("y")], 6), summaries: [], config: flushConfig, now: 2 });
    expect(later.nextState.frontier.purgedErrorKeys).toEqual(["e@2#0"]);
  });

  test("boundary hooks can defer mutations; deferred ones are proposed again at the next flush", () => {
    const holdAll: BoundaryHook = (p) => ({ ...p, stubKeys: [], purgeErrorKeys: [], chains: [] });
    const held = firstFlush([holdAll]);
    expect(held.nextState.frontier.stubbedKeys).toEqual([]);
    expect(held.nextState.frontier.purgedErrorKeys).toEqual([]);
    expect(held.decisions).toContainEqual({ kind: "deferred", what: "stub", key: "a@10#0" });
    expect(held.decisions).toContainEqual({ kind: "deferred", what: "compress-chain", key: "chain:batch:e@21" });
    // summaries are recorded even when their stubs wait
    expect(Object.keys(held.nextState.summaries).length).toBe(3);

    const invent: BoundaryHook = (p) => ({ ...p, stubKeys: [...p.stubKeys, "invented@1#0"] });
    const next = planFlush({ state: held.nextState, branchMessages: branch(), closingMessage: closing, summaries: [], config: flushConfig, now: 6000, boundaryHooks: [invent] });
    expect(next.nextState.frontier.stubbedKeys).toEqual(["a@10#0", "ls@10#0", "a2@31#0"]);
    expect(next.nextState.frontier.purgedErrorKeys).toEqual(["e@21#0"]);
  });

  test("the next render applies the plan and emits no orphan", () => {
    const plan = firstFlush();
    const messages = [...branch(), closing, user("p4", 40)];
    const out = renderContext({ messages, state: plan.nextState, config: flushConfig });
    const json = JSON.stringify(out);
    expect(json).toContain("ref=a@10#0 (pattern or startLine/endLine for part): a.ts: 160 identical lines");
    expect(json).toContain("compressed tool chain");
    expect(json).not.toContain("oldText not found");
    expect(json).not.toContain("line of a.ts"); // both a.ts reads are stubs
    expect(json).toContain("c".repeat(1500)); // c.ts was kept raw
    expect(json).toContain("KEY=1"); // the protected .env read stays verbatim
    const p = pairToolCalls(out);
    expect(p.orphanResults).toEqual([]);
    expect(p.unansweredCalls).toEqual([]);
  });
});
