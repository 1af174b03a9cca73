/**
 * Persisted pruning state: zod schemas are the single definition of every persisted
 * field. Types are inferred from them and every read and write goes through them, so
 * adding a field here is all it takes for it to survive a reload (no field lists
 * elsewhere).
 *
 * Custom entry types, each written as Pi `custom` entries (`{customType, data}`):
 * - flush:    what every flush writes: all of one flush in ONE entry (its summaries, its frontier
 *             as a delta or, now and then, a full checkpoint, its stats and its recall delta), so
 *             a crash can no longer tear a flush. Restore folds the latest checkpoint on the branch
 *             and the deltas after it (`src/state/frontier-fold.ts`).
 * Older sessions hold the separate entries flushes wrote before (still read, no longer written):
 * - frontier: a full snapshot after each flush; the latest on the branch wins.
 * - summary:  one entry per summarized batch; all of them on the branch accumulate.
 * - stats:    a cumulative snapshot after each flush; the latest wins.
 */
import { z } from "zod";
import { recallIndexSchema } from "../recall/recall-index.ts";
import type { BatchSummary } from "../summarize/batch.ts";

export const CUSTOM_TYPE_FRONTIER = "context-keeper/frontier";
export const CUSTOM_TYPE_SUMMARY = "context-keeper/summary";
export const CUSTOM_TYPE_STATS = "context-keeper/stats";
export const CUSTOM_TYPE_FLUSH = "context-keeper/flush";

export const KEEPER_CUSTOM_TYPES = [CUSTOM_TYPE_FRONTIER, CUSTOM_TYPE_SUMMARY, CUSTOM_TYPE_STATS, CUSTOM_TYPE_FLUSH] as const;
export type KeeperCustomType = (typeof KEEPER_CUSTOM_TYPES)[number];

export const STATE_VERSION = 1;

/** A closed tool chain collapsed into one synthetic user message at render. */
export const CompressedChainSchema = z.object({
  /** `chain:` + the batch key of the chain's first batch. */
  chainKey: z.string(),
  /** Timestamp of the chain's first message (a tool-use assistant); also the synthetic message's. */
  fromTimestamp: z.number(),
  /** Timestamp of the chain's last message (the last result before the final answer). */
  toTimestamp: z.number(),
  /** Occurrence key of the first tool call: locates the chain start at render. */
  firstCallKey: z.string(),
  /** Number of messages the chain spans at the flush; render only collapses an exact match. */
  messageCount: z.number().int().positive(),
  /** Occurrence keys of every tool call in the chain. */
  memberKeys: z.array(z.string()),
  /** Batch keys whose summaries the synthetic message carries. */
  summaryRefs: z.array(z.string()),
  /** The synthetic message's text, fixed at the flush so renders stay byte-stable. */
  text: z.string(),
});
export type CompressedChain = z.infer<typeof CompressedChainSchema>;

export const FrontierSchema = z.object({
  version: z.literal(STATE_VERSION),
  /** Flushes applied so far on this branch. */
  flushSeq: z.number().int().nonnegative(),
  /** Wall-clock ms of the last flush (0 before the first). */
  lastFlushAt: z.number(),
  /** Occurrence keys whose results render as stubs. */
  stubbedKeys: z.array(z.string()),
  /** Stubbed duplicate outputs: occurrence key -> key of the identical, summarized output. */
  aliases: z.record(z.string(), z.string()),
  /** Occurrence keys of failed calls whose arguments render purged. */
  purgedErrorKeys: z.array(z.string()),
  compressedChains: z.array(CompressedChainSchema),
  /** Assistant messages older than this lose their thinking at render (owned by the thinking strip). */
  thinkingStripBoundaryTimestamp: z.number().optional(),
  /**
   * Cache discipline: timestamp of the last message of the frozen history (the quantized
   * boundary). History up to it changes only at grid steps or on a cold cache; the seam mark
   * sits at its end. Absent until the boundary is first set.
   */
  frozenThroughTimestamp: z.number().optional(),
  /**
   * Cache discipline: timestamp of the last message the seam mark covers — the user prompt
   * right before the first message the next request-end flush is expected to change, never past
   * the frozen boundary (`src/discipline/seam-point.ts`). Absent: the seam sits at the frozen
   * boundary (states written before this field).
   */
  seamThroughTimestamp: z.number().optional(),
});
export type Frontier = z.infer<typeof FrontierSchema>;

/** Where the seam mark goes: the persisted seam point, else the frozen boundary. */
export function seamThroughOf(frontier: Frontier): number | undefined {
  return frontier.seamThroughTimestamp ?? frontier.frozenThroughTimestamp;
}

export const BatchSummarySchema = z.object({
  batchKey: z.string(),
  text: z.string(),
  source: z.enum(["model", "extractive", "raw"]),
  inputTokens: z.number(),
  outputTokens: z.number(),
  cost: z.number(),
});
// Keep the schema and the shared type in lock-step in both directions.
type _SummaryMatches = [z.infer<typeof BatchSummarySchema>] extends [BatchSummary]
  ? [BatchSummary] extends [z.infer<typeof BatchSummarySchema>]
    ? true
    : never
  : never;
const _summaryMatches: _SummaryMatches = true;
void _summaryMatches;

export const SummaryRecordSchema = z.object({
  version: z.literal(STATE_VERSION),
  batchKey: z.string(),
  summary: BatchSummarySchema,
  /** Occurrence keys of the calls the summary covers (the captured calls of the batch). */
  coveredKeys: z.array(z.string()),
  /** Occurrence key -> content hash of its output: identical later outputs alias to it. */
  outputHashes: z.record(z.string(), z.string()),
  /** Flush that recorded it. */
  flushSeq: z.number().int().nonnegative(),
});
export type SummaryRecord = z.infer<typeof SummaryRecordSchema>;

export const StatsSchema = z.object({
  version: z.literal(STATE_VERSION),
  flushes: z.number().int().nonnegative(),
  /** Flushes that changed rendered history (each costs one cache rewrite). */
  rewritesCaused: z.number().int().nonnegative(),
  stubbedResults: z.number().int().nonnegative(),
  purgedErrors: z.number().int().nonnegative(),
  compressedChains: z.number().int().nonnegative(),
  /** chars/4 estimate of history removed from every later request. */
  tokensSavedEstimate: z.number(),
  summarizerInputTokens: z.number(),
  summarizerOutputTokens: z.number(),
  summarizerCost: z.number(),
});
export type Stats = z.infer<typeof StatsSchema>;

/**
 * How one flush moved the frontier: folding the deltas of a branch in order onto the checkpoint
 * before them reproduces the frontier exactly (`src/state/frontier-fold.ts`). Lists keep their
 * order: removals filter, additions append. A list or map left out did not change; a boundary
 * left out did not move, `null` means it was cleared.
 */
export const FrontierDeltaSchema = z.object({
  /** `flushSeq` of the frontier this delta applies to; restore skips a delta that does not follow. */
  from: z.number().int().nonnegative(),
  flushSeq: z.number().int().nonnegative(),
  lastFlushAt: z.number(),
  addStubbed: z.array(z.string()).optional(),
  dropStubbed: z.array(z.string()).optional(),
  setAliases: z.record(z.string(), z.string()).optional(),
  dropAliases: z.array(z.string()).optional(),
  addPurged: z.array(z.string()).optional(),
  dropPurged: z.array(z.string()).optional(),
  addChains: z.array(CompressedChainSchema).optional(),
  /** `chainKey`s of the chains dropped. */
  dropChains: z.array(z.string()).optional(),
  thinkingStripBoundaryTimestamp: z.number().nullable().optional(),
  frozenThroughTimestamp: z.number().nullable().optional(),
  seamThroughTimestamp: z.number().nullable().optional(),
});
export type FrontierDelta = z.infer<typeof FrontierDeltaSchema>;

/**
 * Version 2 carries the frontier as `frontierDelta` or `frontier` (a full checkpoint); version 1
 * (written by no flush, still read) only as `frontier`. An older keeper cannot fold deltas, so it
 * reports version 2 unreadable rather than restore a stale frontier.
 */
export const FLUSH_RECORD_VERSION = 2;

/**
 * One flush, atomically: one JSONL line, so it lands whole or not at all. The frontier part is
 * absent only for a flush that changed nothing but the summaries or the recall index; `stats`
 * is absent for a frontier-only flush (cache discipline moving its frozen boundary); `recall`
 * holds the occurrences the flush indexed. Restore reads each part through its own schema, so
 * one bad part costs only itself.
 */
export const FlushRecordSchema = z.object({
  version: z.union([z.literal(STATE_VERSION), z.literal(FLUSH_RECORD_VERSION)]),
  summaries: z.array(SummaryRecordSchema),
  /** A full checkpoint of the frontier after this flush. */
  frontier: FrontierSchema.optional(),
  /** The frontier after this flush as a delta from the one before it (never with `frontier`). */
  frontierDelta: FrontierDeltaSchema.optional(),
  stats: StatsSchema.optional(),
  recall: recallIndexSchema.optional(),
});
export type FlushRecord = z.infer<typeof FlushRecordSchema>;

/**
 * The frontier entries on the branch since its last full checkpoint: the flush planner writes
 * the next checkpoint from it (`src/state/frontier-fold.ts`). Not persisted: restore measures it.
 */
export interface FrontierChain {
  /** JSON size of the last checkpoint (0: none yet). */
  checkpointBytes: number;
  /** Deltas written since it, and their JSON size. */
  deltas: number;
  deltaBytes: number;
}

/** Everything the render pipeline and the flush planner read. */
export interface KeeperState {
  frontier: Frontier;
  /** batchKey -> record. */
  summaries: Record<string, SummaryRecord>;
  stats: Stats;
  /** Absent: no checkpoint known (the next flush writes one). */
  frontierChain?: FrontierChain;
}

export function emptyFrontier(): Frontier {
  return {
    version: STATE_VERSION,
    flushSeq: 0,
    lastFlushAt: 0,
    stubbedKeys: [],
    aliases: {},
    purgedErrorKeys: [],
    compressedChains: [],
  };
}

export function emptyStats(): Stats {
  return {
    version: STATE_VERSION,
    flushes: 0,
    rewritesCaused: 0,
    stubbedResults: 0,
    purgedErrors: 0,
    compressedChains: 0,
    tokensSavedEstimate: 0,
    summarizerInputTokens: 0,
    summarizerOutputTokens: 0,
    summarizerCost: 0,
  };
}

export function emptyState(): KeeperState {
  return { frontier: emptyFrontier(), summaries: {}, stats: emptyStats() };
}
