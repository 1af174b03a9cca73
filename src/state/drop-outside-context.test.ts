import { describe, expect, test } from "bun:test";
import { dropStateOutsideContext } from "./drop-outside-context.ts";
import type { KeeperState } from "./schema.ts";
import { fullFrontier, fullRecord, fullStats } from "../../test/support/state/fixtures.ts";

const state: KeeperState = {
  frontier: fullFrontier,
  summaries: {
    [fullRecord.batchKey]: fullRecord,
    "batch:old@0": { ...fullRecord, batchKey: "batch:old@0", coveredKeys: ["old@0#0"], outputHashes: {} },
  },
  stats: fullStats,
};

describe("dropStateOutsideContext", () => {
  test("everything live: same state object", () => {
    const live = new Set(["a@1#0", "b@2#1", "c@3#0", "e@4#0", "old@0#0"]);
    expect(dropStateOutsideContext(state, live)).toBe(state);
  });

  test("drops keys, aliases, chains and summaries that refer to nothing live; keeps stats and boundary", () => {
    const out = dropStateOutsideContext(state, new Set(["b@2#1"]));
    expect(out.frontier.stubbedKeys).toEqual(["b@2#1"]);
    expect(out.frontier.purgedErrorKeys).toEqual([]);
    expect(out.frontier.aliases).toEqual({});
    expect(out.frontier.compressedChains).toEqual(fullFrontier.compressedChains); // b@2#1 is a member
    expect(out.summaries).toEqual({});
    expect(out.stats).toBe(fullStats);
    expect(out.frontier.thinkingStripBoundaryTimestamp).toBe(fullFrontier.thinkingStripBoundaryTimestamp);
    expect(state.frontier.stubbedKeys).toEqual(["a@1#0", "b@2#1"]); // input untouched
  });

  test("a live alias keeps the summary it points into", () => {
    const out = dropStateOutsideContext(state, new Set(["c@3#0"]));
    expect(out.frontier.aliases).toEqual({ "c@3#0": "a@1#0" });
    expect(Object.keys(out.summaries)).toEqual([fullRecord.batchKey]);
    expect(out.frontier.compressedChains).toEqual([]);
  });
});
