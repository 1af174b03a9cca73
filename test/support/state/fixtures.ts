/** State values with every field set to a non-default value. */
import type { Frontier, Stats, SummaryRecord } from "../../../src/state/schema.ts";

/** A frontier with every field set to a non-default value. */
export const fullFrontier: Frontier = {
  version: 1,
  flushSeq: 7,
  lastFlushAt: 1_700_000_000_123,
  stubbedKeys: ["a@1#0", "b@2#1"],
  aliases: { "c@3#0": "a@1#0" },
  purgedErrorKeys: ["e@4#0"],
  compressedChains: [
    {
      chainKey: "chain:batch:a@1",
      fromTimestamp: 1,
      toTimestamp: 2,
      firstCallKey: "a@1#0",
      messageCount: 3,
      memberKeys: ["a@1#0", "b@2#1"],
      summaryRefs: ["batch:a@1"],
      text: "[context-keeper] compressed",
    },
  ],
  thinkingStripBoundaryTimestamp: 1_700_000_000_000,
};

export const fullRecord: SummaryRecord = {
  version: 1,
  batchKey: "batch:a@1",
  summary: { batchKey: "batch:a@1", text: "read a", source: "extractive", inputTokens: 12, outputTokens: 3, cost: 0.25 },
  coveredKeys: ["a@1#0"],
  outputHashes: { "a@1#0": "abc:12" },
  flushSeq: 7,
};

export const fullStats: Stats = {
  version: 1,
  flushes: 3,
  rewritesCaused: 2,
  stubbedResults: 9,
  purgedErrors: 1,
  compressedChains: 1,
  tokensSavedEstimate: 12345,
  summarizerInputTokens: 800,
  summarizerOutputTokens: 90,
  summarizerCost: 0.0042,
};

