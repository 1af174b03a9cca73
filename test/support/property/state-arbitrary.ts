/** States for generated sessions: one planned by a real flush, or arbitrary key subsets. */
import fc from "fast-check";
import { captureBatches } from "../../../src/flush/capture.ts";
import { planFlush } from "../../../src/flush/plan.ts";
import type { KeeperEntry } from "../../../src/state/entries.ts";
import { liveOccurrenceKeys } from "../../../src/prune/occurrence.ts";
import type { ContextMessage } from "../../../src/session/messages.ts";
import { type KeeperState, STATE_VERSION, emptyState } from "../../../src/state/schema.ts";
import type { BatchSummary } from "../../../src/summarize/batch.ts";
import { type BuiltSession, propertyConfig } from "./session-arbitrary.ts";

const keepLast2 = ({ assistantTimestamps, previous }: { assistantTimestamps: number[]; previous: number | undefined }) =>
  assistantTimestamps.length <= 2 ? previous : Math.max(previous ?? -Infinity, assistantTimestamps[assistantTimestamps.length - 2]);

/** Summaries for every capturable batch; every third one is kept raw. */
export function summariesFor(branch: readonly ContextMessage[], state: KeeperState): BatchSummary[] {
  const { batches } = captureBatches({ branchMessages: branch, state, config: propertyConfig });
  return batches.map((b, i) => ({
    batchKey: b.batchKey,
    text: `summary of ${b.calls.length} call(s)`,
    source: i % 3 === 2 ? "raw" : "model",
    inputTokens: 100,
    outputTokens: 10,
    cost: 0.001,
  }));
}

/**
 * The state after two flushes: one at the end of a middle request, one at the end of the
 * previous request (branch = history minus the current prompt). Returns the final state
 * and every entry both flushes persisted, in order.
 */
export function plannedState(session: BuiltSession): { nextState: KeeperState; entries: KeeperEntry[] } {
  const branch = session.history.slice(0, -1);
  const users = branch.flatMap((m, i) => (m.role === "user" ? [i] : []));
  const middle = users.length > 1 ? users[Math.floor(users.length / 2)] : 0;
  let state = emptyState();
  const entries: KeeperEntry[] = [];
  if (middle > 0) {
    const early = branch.slice(0, middle);
    const first = planFlush({ state, branchMessages: early, summaries: summariesFor(early, state), config: propertyConfig, now: 1, thinkingBoundary: keepLast2 });
    state = first.nextState;
    entries.push(...first.entriesToPersist);
  }
  const second = planFlush({
    state,
    branchMessages: branch,
    summaries: summariesFor(branch, state),
    config: propertyConfig,
    now: 2,
    thinkingBoundary: keepLast2,
  });
  entries.push(...second.entriesToPersist);
  return { nextState: second.nextState, entries };
}

/** 0 = nothing, 1 = stub, 2 = purge, 3 = both, by key position. */
export const keyMask = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 32, maxLength: 32 });

export function maskedState(messages: readonly ContextMessage[], mask: number[], boundary?: number): KeeperState {
  const keys = [...liveOccurrenceKeys(messages)];
  const pick = (bit: number) => keys.filter((_, i) => (mask[i % mask.length] & bit) !== 0);
  const stubbed = pick(1);
  const s = emptyState();
  s.summaries["batch:any"] = {
    version: STATE_VERSION,
    batchKey: "batch:any",
    summary: { batchKey: "batch:any", text: "generated", source: "model", inputTokens: 1, outputTokens: 1, cost: 0 },
    coveredKeys: stubbed,
    outputHashes: {},
    flushSeq: 1,
  };
  s.frontier = { ...s.frontier, flushSeq: 1, stubbedKeys: stubbed, purgedErrorKeys: pick(2) };
  if (boundary !== undefined) s.frontier.thinkingStripBoundaryTimestamp = boundary;
  return s;
}
