/**
 * Pruning configuration: the shape the pure core reads. The settings schema (zod) mirrors
 * it; this file only holds the interface and its defaults.
 */

export interface ErrorPurgeConfig {
  enabled: boolean;
  /**
   * A failed call's arguments are purged at the first flush at which at least this many
   * assistant messages follow the failed call's assistant message (counted over the raw
   * session branch at the flush, never per render).
   */
  cooldownTurns: number;
}

export interface ChainCompressionConfig {
  enabled: boolean;
  /**
   * A closed tool chain collapses at a flush once at least this many user prompts follow
   * its final answer (so the chains of the last `rollingWindow` prompts stay intact); 0: at
   * the flush of its own final answer (the next prompt sees it collapsed).
   */
  rollingWindow: number;
  /**
   * Characters of a failed call's failing tests and error lines a collapsed chain keeps under
   * its call line (`src/summarize/kept-facts.ts`); 0 keeps call lines only. Absent:
   * `DEFAULT_KEPT_FACT_CHARS`.
   */
  keptFactChars?: number;
}

export interface BudgetTriggerConfig {
  enabled: boolean;
  /**
   * Flush mid-run (at a `turn_end`) once the context fills this fraction of the model's
   * window ... (see `src/flush/budget-trigger.ts`, wrapped by `budgetTriggerFires` in
   * `src/engine/triggers.ts`)
   */
  fraction: number;
  /** ... or this many tokens, whichever is lower (keeps the trigger alive on 1M windows). */
  maxTokens: number;
}

export interface LoopFlushConfig {
  /**
   * Flush inside a running tool loop, at a turn end, when pruning the loop's older outputs pays
   * for the rewrite over the loop's expected remaining steps (`loopFlushDue` in
   * `src/engine/triggers.ts`).
   */
  enabled: boolean;
  /**
   * The loop's last tool steps whose outputs are never pruned while it runs (the step the model
   * has not answered yet counts as one; at least 1). Applies to every flush inside a loop.
   */
  keepRecentSteps: number;
  /** At most one flush inside a loop per this many tool steps. */
  minStepsBetween: number;
}

export interface PruneConfig {
  enabled: boolean;
  /** A batch whose captured result text totals fewer characters than this is not summarized. */
  minBatchChars: number;
  /** Tool names whose calls are never captured, stubbed, purged or compressed. */
  protectedTools: string[];
  /**
   * Globs matched against path-like arguments (`path`, `file_path`, and path tokens of a
   * bash `command`). A call touching a matching path is never pruned. A glob without `/`
   * also matches a path's last segment (`.env` protects `config/.env`).
   */
  protectedPaths: string[];
  errorPurge: ErrorPurgeConfig;
  chainCompression: ChainCompressionConfig;
  budgetTrigger: BudgetTriggerConfig;
  loopFlush: LoopFlushConfig;
}

/** Name of the recall tool. */
export const RECALL_TOOL_NAME = "keeper_recall";

/**
 * A recall's output is a copy of an original the recall index holds: it is never summarized or
 * stubbed (a stub of a copy would send the model on a second recall), and it does not pin its
 * tool loop — the loop collapses when its prompt is answered, and the chain's line for the
 * recall names the ref it recalled, one recall away again.
 */
export function isRecallCopy(toolName: string): boolean {
  return toolName === RECALL_TOOL_NAME;
}

export const DEFAULT_KEPT_FACT_CHARS = 300;

export const DEFAULT_PRUNE_CONFIG: PruneConfig = {
  enabled: true,
  minBatchChars: 1200,
  protectedTools: [],
  protectedPaths: [],
  errorPurge: { enabled: true, cooldownTurns: 4 },
  chainCompression: { enabled: true, rollingWindow: 0, keptFactChars: DEFAULT_KEPT_FACT_CHARS },
  budgetTrigger: { enabled: true, fraction: 0.5, maxTokens: 150_000 },
  loopFlush: { enabled: true, keepRecentSteps: 2, minStepsBetween: 6 },
};
