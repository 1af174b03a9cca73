/**
 * The `contextKeeper` settings: one zod schema, a default on every leaf.
 *
 * Parsing walks this schema key by key (see `parse.ts`), so a bad value falls back to the
 * default for that key only. Nested groups are plain `z.object`s whose leaves carry
 * `.default(...)`; a group's default is derived from its leaves.
 */
import { z } from "zod";

const nonNegativeInt = z.number().int().nonnegative();
const positiveInt = z.number().int().positive();
const GRID_CHUNK_TOKENS_DEFAULT = 8000;
const KEEP_TAIL_TOKENS_DEFAULT = 0;
const HORIZON_CAP_DEFAULT = 30;

export const keeperSettingsSchema = z.object({
  /** Master switch. `false` turns every feature off and leaves the wire untouched. */
  enabled: z.boolean().default(true),
  /** Show the status line (context before → after, tokens saved). */
  statusLine: z.boolean().default(true),
  pruning: z.object({
    enabled: z.boolean().default(true),
    /** Batches whose results total fewer characters than this are left alone. */
    minBatchChars: nonNegativeInt.default(1200),
    /** Tool names never captured or pruned. */
    protectedTools: z.array(z.string()).default([]),
    /** Path globs never captured or pruned (matched against path arguments and bash commands). */
    protectedPaths: z.array(z.string()).default([]),
    errorPurge: z.object({
      enabled: z.boolean().default(true),
      /** Assistant turns, counted at a flush, after which a failed call's arguments are purged. */
      cooldownTurns: nonNegativeInt.default(4),
    }),
    chainCompression: z.object({
      enabled: z.boolean().default(true),
      /** Closed tool chains older than this many user prompts collapse into one message of call lines. 0: a request's chain collapses at the flush of its own final answer, so the next prompt's rewrite starts at that chain (bench/wire: cheaper than 1 on both tuned seeds). */
      rollingWindow: nonNegativeInt.default(0),
      /** Characters of a failed call's failing tests and error lines kept under its call line (src/summarize/kept-facts.ts); 0: call lines only. */
      keptFactChars: nonNegativeInt.default(300),
    }),
    budgetTrigger: z.object({
      enabled: z.boolean().default(true),
      /** Flush inside a long tool loop once the context fills this fraction of the window (and grew by a quarter of that since the last flush; src/flush/budget-trigger.ts). */
      fraction: z.number().gt(0).lte(1).default(0.5),
      /** Cap on that threshold in tokens, so the trigger still fires on 1M-token windows. */
      maxTokens: positiveInt.default(150000),
    }),
    loopFlush: z.object({
      /** Flush inside a running tool loop when pruning its older outputs pays for the rewrite over the loop's expected remaining steps (src/engine/triggers.ts `loopFlushDue`). */
      enabled: z.boolean().default(true),
      /** The loop's last tool steps whose outputs are never pruned while it runs (at least 1: the step the model has not answered yet). */
      keepRecentSteps: positiveInt.default(2),
      /** At most one flush inside a loop per this many tool steps. */
      minStepsBetween: positiveInt.default(6),
    }),
  }),
  summarizer: z.object({
    /** `""` uses the session model; otherwise `provider/model-id`. */
    model: z.string().default(""),
    /**
     * `extractive` (default): never call a model — the deterministic summary, at no cost and with
     * no late rewrite; `auto`: ask the model for a batch only when the requests expected to read it
     * repay the call (src/summarize/summary-choice.ts); `model`: always ask. On the wire benchmark
     * (bench/wire) `extractive` was cheaper than `auto` on every seed and never rewrote the cache
     * inside a tool loop (a model summary can land after the next prompt has started).
     */
    mode: z.enum(["auto", "model", "extractive"]).default("extractive"),
    idleTimeoutMs: positiveInt.default(20000),
    ceilingTimeoutMs: positiveInt.default(90000),
  }),
  recall: z.object({
    /** Outputs larger than this many bytes are also spilled to a file beside the session. */
    spillThresholdBytes: positiveInt.default(65536),
    /** Characters per recall page. */
    pageChars: positiveInt.default(20000),
  }),
  thinkingStrip: z.object({
    mode: z.enum(["auto", "off", "flush-gated"]).default("auto"),
    /** Presets 1/4/8/16/32/64; any integer ≥ 1 works (0 is clamped to 1). 1: the strip rewrites what the flush's stubs rewrite anyway (src/thinking/keep-last-turns.ts). */
    keepLastTurns: nonNegativeInt.default(1),
  }),
  compaction: z.object({
    /** Background compaction (also controlled by PI_ASYNC_PREFIX_COMPACTION). */
    enabled: z.boolean().default(true),
  }),
  cache: z.object({
    /** Quantized boundaries, piggybacking and the profitability gate decide when history may change. `false`: every flush applies everything it proposes. */
    discipline: z.boolean().default(true),
    /** One extra `cache_control` mark at the end of the frozen history (Anthropic Messages only; needs `discipline`). */
    seam: z.boolean().default(true),
    /** Grid step of the frozen-history boundary, in estimated tokens of the raw branch. */
    gridChunkTokens: positiveInt.default(GRID_CHUNK_TOKENS_DEFAULT),
    /** Newest history (estimated tokens) the boundary always leaves out of the frozen part. */
    keepTailTokens: nonNegativeInt.default(KEEP_TAIL_TOKENS_DEFAULT),
    /** Net saving (uncached-input-token units) a rewrite must beat while the cache is warm. */
    minNetSaving: z.number().default(0),
    /** Most future requests the gate counts when it prices a saving (the Lindy horizon's cap). */
    horizonCap: positiveInt.default(HORIZON_CAP_DEFAULT),
  }),
});

export type KeeperSettings = z.infer<typeof keeperSettingsSchema>;
