/**
 * A torn flush (issue #14): the process dies between a flush's appends, so its summary entries
 * land and its frontier (and stats) do not — or a line of it is lost. Restore reconciles:
 * summaries whose frontier never landed are re-proposed (the next flush stubs what they cover)
 * and their paid summarizer cost is re-adopted into the stats; one diagnostic says so.
 */
import { describe, expect, test } from "bun:test";
import { planFlush } from "../flush/plan.ts";
import { renderContext } from "../prune/pipeline.ts";
import { captureBatches } from "../flush/capture.ts";
import { hiddenOutputKeys } from "../recall/pruned-calls.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { FILE_A, branch, closing, flushConfig, summary } from "../../test/support/flush/session.ts";
import type { KeeperEntry } from "./entries.ts";
import { emptyState, type FlushRecord, type KeeperState } from "./schema.ts";
import { asLegacyEntries } from "../../test/support/state/flush-entries.ts";
import { reconcileTornFlushes, restoreReconciled } from "./torn-flush.ts";

const asPi = (entries: readonly KeeperEntry[]) =>
  entries.map((e, i) => JSON.parse(JSON.stringify({ type: "custom", id: `k${i}`, parentId: i === 0 ? null : `k${i - 1}`, ...e })));

/** Summaries for every batch a flush on this state would capture (what the summarizer returns). */
function summariesFor(state: KeeperState, messages: readonly ContextMessage[]) {
  return captureBatches({ branchMessages: messages, state, config: flushConfig }).batches.map((b) => summary(b.batchKey, `summary of ${b.batchKey}`));
}

function flush(state: KeeperState, messages: readonly ContextMessage[], now: number) {
  return planFlush({ state, branchMessages: messages, summaries: summariesFor(state, messages), config: flushConfig, now });
}

const first = [...branch(), closing];
const second = [
  ...first,
  user("p4", 40),
  assistant([call("d", "read", { path: "d.ts" }), call("a3", "read", { path: "a.ts" })], 41),
  result("d", "read", "d".repeat(1600), 42),
  result("a3", "read", FILE_A, 43),
  assistant([text("done 4")], 44),
];

/**
 * Two complete flushes, and the keeper entries they persisted, in order: as flushes write them
 * now (one flush entry each) and as older versions wrote them (separate summary, frontier and
 * stats entries: the ones a crash could tear).
 */
function twoFlushes() {
  const one = flush(emptyState(), first, 1000);
  const two = flush(one.nextState, second, 2000);
  const entries = [...one.entriesToPersist, ...two.entriesToPersist];
  const legacy = asLegacyEntries(entries) as KeeperEntry[];
  const oneLegacy = asLegacyEntries(one.entriesToPersist) as KeeperEntry[];
  return { one, two, entries, legacy, oneLegacy, twoLegacy: legacy.slice(oneLegacy.length) };
}

describe("a torn flush", () => {
  test("summaries landed, frontier and stats did not: re-proposed, named once, and the next flush stubs them", () => {
    const { one, two, oneLegacy, twoLegacy } = twoFlushes();
    const summariesOnly = twoLegacy.filter((e) => e.customType === "context-keeper/summary");
    expect(summariesOnly.length).toBeGreaterThan(0);
    const restored = restoreReconciled(asPi([...oneLegacy, ...summariesOnly]));
    expect(restored.diagnostics).toHaveLength(1);
    expect(restored.diagnostics[0]).toContain("flush 2");
    expect(restored.diagnostics[0]).toContain(`${summariesOnly.length} summar`);
    expect(restored.reproposed.sort()).toEqual(summariesOnly.map((e) => (e.data as { batchKey: string }).batchKey).sort());
    // The frontier is the last complete flush's, nothing invented.
    expect(restored.state.frontier).toEqual(one.nextState.frontier);
    // The summarizer was paid for them: the cost counts, the flush does not (it never landed).
    const torn = summariesOnly.map((e) => e.data as { summary: { cost: number; inputTokens: number } });
    expect(restored.state.stats.flushes).toBe(one.nextState.stats.flushes);
    expect(restored.state.stats.summarizerCost).toBeCloseTo(one.nextState.stats.summarizerCost + torn.reduce((n, r) => n + r.summary.cost, 0));
    expect(restored.state.stats.summarizerInputTokens).toBe(one.nextState.stats.summarizerInputTokens + torn.reduce((n, r) => n + r.summary.inputTokens, 0));

    // The next flush asks the summarizer for nothing new and stubs what the torn flush would have.
    expect(summariesFor(restored.state, second)).toEqual([]);
    const next = flush(restored.state, second, 3000);
    expect(new Set(next.nextState.frontier.stubbedKeys)).toEqual(new Set(two.nextState.frontier.stubbedKeys));
    expect(next.nextState.frontier.aliases).toEqual(two.nextState.frontier.aliases);
    expect(next.nextState.frontier.compressedChains.map((c) => c.chainKey)).toEqual(two.nextState.frontier.compressedChains.map((c) => c.chainKey));
    expect(next.nextState.stats.summarizerCost).toBeCloseTo(two.nextState.stats.summarizerCost);
    // Once that flush landed, the reconciliation has nothing left to say.
    // (An old session continued by this version: its flush entry folds onto the old snapshot.)
    const healed = restoreReconciled(asPi([...oneLegacy, ...summariesOnly, ...next.entriesToPersist]));
    expect(healed.diagnostics).toEqual([]);
    expect(healed.reproposed).toEqual([]);
  });

  test("every cut point of two flushes' old separate entries converges, at the next flush, to the untorn frontier", () => {
    const { two, legacy: entries } = twoFlushes();
    for (let cut = 0; cut <= entries.length; cut++) {
      const restored = restoreReconciled(asPi(entries.slice(0, cut)));
      const next = flush(restored.state, second, 3000);
      const after = next.entriesToPersist.length > 0 ? next.nextState : restored.state;
      // Every output the untorn flushes hide is hidden again (stubbed or aliased: a cut inside
      // flush 1 re-plans both flushes as one, which may summarize a duplicate instead of aliasing it).
      const missing = [...hiddenOutputKeys(two.nextState)].filter((k) => !hiddenOutputKeys(after).has(k));
      expect({ cut, missing }).toEqual({ cut, missing: [] });
      expect({ cut, purged: new Set(after.frontier.purgedErrorKeys) }).toEqual({ cut, purged: new Set(two.nextState.frontier.purgedErrorKeys) });
    }
  });

  test("complete flushes: the state is left as restored, with no diagnostic", () => {
    const { entries, legacy, two } = twoFlushes();
    const restored = restoreReconciled(asPi(entries));
    expect(restored.diagnostics).toEqual([]);
    expect(restored.state).toEqual(JSON.parse(JSON.stringify(two.nextState)));
    const state = restored.state;
    expect(reconcileTornFlushes(state).state).toBe(state);
    // Byte-identical requests from the restored state and from the state in memory.
    const render = (s: KeeperState) => JSON.stringify(renderContext({ messages: second, state: s, config: flushConfig }));
    expect(render(restored.state)).toBe(render(two.nextState));
    // Written the old way: the same state (the delta chain restarts at the old snapshot).
    const old = restoreReconciled(asPi(legacy));
    expect(old.diagnostics).toEqual([]);
    expect({ ...old.state, frontierChain: undefined }).toEqual(JSON.parse(JSON.stringify({ ...two.nextState, frontierChain: undefined })));
  });

  test("a flush entry is one line: a damaged frontier delta stops the frontier at the flush before, and its summaries are re-proposed", () => {
    const { one, two } = twoFlushes();
    const [entry] = two.entriesToPersist;
    const record = entry!.data as FlushRecord;
    expect(record.frontierDelta).toBeDefined();
    const damaged = { ...entry!, data: { ...record, frontierDelta: { ...record.frontierDelta, from: "x" } } };
    const restored = restoreReconciled(asPi([...one.entriesToPersist, damaged]));
    expect(restored.diagnostics[0]).toContain("(frontierDelta): from");
    expect(restored.diagnostics[1]).toContain("flush 2 was torn");
    expect(restored.state.frontier).toEqual(JSON.parse(JSON.stringify(one.nextState.frontier)));
    expect(restored.state.frontierChain).toBeUndefined(); // the next flush writes a checkpoint
    expect(restored.reproposed.sort()).toEqual(record.summaries.map((r) => r.batchKey).sort());
    const next = flush(restored.state, second, 3000);
    expect(new Set(next.nextState.frontier.stubbedKeys)).toEqual(new Set(two.nextState.frontier.stubbedKeys));
    expect((next.entriesToPersist[0]!.data as FlushRecord).frontier).toBeDefined();
  });
});
