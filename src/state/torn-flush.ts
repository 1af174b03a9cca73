/**
 * Restore that reconciles a torn flush. A flush appends its summaries, then its frontier, then
 * its stats (older sessions: several entries; see `context-keeper/flush` for the atomic one).
 * A crash between those appends leaves summaries whose frontier never landed: they are
 * recognisable by a `flushSeq` above the restored frontier's.
 *
 * Reconciliation re-proposes them rather than re-adopting a guessed frontier: they stay in the
 * state, so capture does not ask the summarizer for those batches again, and the next flush's
 * plan stubs every call they cover (it proposes stubs for every non-raw summary's unstubbed
 * keys) and re-proposes the chains they complete — exactly what the torn flush would have
 * applied, decided again against the branch as it is now. The summarizer cost they record was
 * paid, and the stats that would have counted it never landed, so it is re-adopted into the
 * stats (once: when the next flush lands, its stats carry it and the frontier has caught up).
 */
import { restoreState, type RestoredState } from "./entries.ts";
import type { KeeperState, SummaryRecord } from "./schema.ts";

export interface Reconciled {
  state: KeeperState;
  /** Batch keys of summaries whose flush never landed its frontier (the next flush applies them). */
  reproposed: string[];
  diagnostics: string[];
}

/** Pure: the state with torn flushes reconciled; the same state object when none is torn. */
export function reconcileTornFlushes(state: KeeperState): Reconciled {
  const landed = state.frontier.flushSeq;
  const torn = Object.values(state.summaries).filter((r) => r.flushSeq > landed);
  if (torn.length === 0) return { state, reproposed: [], diagnostics: [] };
  const add = (pick: (r: SummaryRecord) => number) => torn.reduce((n, r) => n + pick(r), 0);
  const stats = {
    ...state.stats,
    summarizerInputTokens: state.stats.summarizerInputTokens + add((r) => r.summary.inputTokens),
    summarizerOutputTokens: state.stats.summarizerOutputTokens + add((r) => r.summary.outputTokens),
    summarizerCost: state.stats.summarizerCost + add((r) => r.summary.cost),
  };
  const flushes = [...new Set(torn.map((r) => r.flushSeq))].sort((a, b) => a - b);
  const diagnostic =
    `flush ${flushes.join(", ")} was torn (its frontier never landed; the session stops after flush ${landed}): ` +
    `its ${torn.length} summar${torn.length === 1 ? "y is" : "ies are"} kept and applied at the next flush`;
  return { state: { ...state, stats }, reproposed: torn.map((r) => r.batchKey), diagnostics: [diagnostic] };
}

/** `restoreState` followed by the reconciliation: what a session start should use. */
export function restoreReconciled(entries: readonly unknown[]): RestoredState & { reproposed: string[] } {
  const restored = restoreState(entries);
  const reconciled = reconcileTornFlushes(restored.state);
  return { state: reconciled.state, reproposed: reconciled.reproposed, diagnostics: [...restored.diagnostics, ...reconciled.diagnostics] };
}
