/**
 * Session start, `/tree`, `/keeper on`: the engine state read back from the branch's entries
 * (torn flushes reconciled, the recall index merged, state for calls that left the context
 * dropped) and the cache ledger seeded from the branch's recorded requests. Plain data in:
 * the entries, the context Pi builds from them, what the cache is keyed on besides the model,
 * and Pi's context usage (where the budget trigger counts from).
 */
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import { restoreRecallIndex } from "../recall/recall-entries.ts";
import type { ContextMessage } from "../session/messages.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { restoreReconciled } from "../state/torn-flush.ts";
import { ledgerFromBranch } from "./cache-ledger.ts";
import type { EngineState } from "./session.ts";

export interface RestoreInput {
  /** The branch's entries, root first (`sessionManager.getBranch()`). */
  branch: readonly unknown[];
  /** The messages Pi puts in context now (compactions applied). */
  context: readonly ContextMessage[];
  /** The cache key besides the model and the time: Pi's thinking level and active tools. */
  key: { thinkingLevel: string; toolsDigest: string };
  /** Pi's context usage now (0 when unknown). */
  contextTokens: number;
}

export function restoredState(state: EngineState, input: RestoreInput): { state: EngineState; problems: string[] } {
  const restored = restoreReconciled(input.branch);
  const recall = restoreRecallIndex(input.branch);
  const problems = [...restored.diagnostics, ...recall.diagnostics];
  return {
    problems,
    state: {
      ...state,
      keeper: dropStateOutsideContext(restored.state, liveOccurrenceKeys(input.context)),
      recall: recall.index,
      ledger: ledgerFromBranch(input.context, (at, model) => ({ at, model, ...input.key })),
      lastRender: undefined,
      renderMemo: undefined,
      flushing: undefined,
      replans: [],
      problems,
      budget: { ...state.budget, tokensAtLastFlush: input.contextTokens },
    },
  };
}

/** One message for everything restore had to skip or reconcile: what, and what was done. */
export function restoreNotice(problems: readonly string[]): string {
  const shown = problems.slice(0, 3).join("; ");
  const more = problems.length > 3 ? `; and ${problems.length - 3} more (see /keeper)` : "";
  return `context-keeper: restored the saved state with ${problems.length} problem(s) — ${shown}${more}`;
}
