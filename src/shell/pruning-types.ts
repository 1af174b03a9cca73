/**
 * Shapes shared by the pruning runtime's pieces: what triggers a flush, what a flush
 * reports, what the runtime is given, and the one mutable record it keeps per session.
 */
import type { CompactionOutlook } from "../compaction/cooperation.ts";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FlushDecision } from "../flush/plan.ts";
import type { DisciplineFacts, DisciplineOutcome } from "../keeper/discipline.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { emptyRecallIndex, type RecallIndex } from "../recall/recall-index.ts";

/** "cold": a re-plan without new summaries at a request whose cache is already lost. */
export type FlushTrigger = "request-end" | "budget" | "manual" | "cold";

export interface FlushReport {
  trigger: FlushTrigger;
  batches: number;
  decisions: FlushDecision[];
  persistedEntries: number;
  durationMs: number;
}

export interface PruningRuntimeDeps {
  pi: ExtensionAPI;
  settings: () => KeeperSettings;
  /** Status line text (already gated on settings by the caller). */
  status: (ctx: ExtensionContext, text: string | undefined) => void;
  notify: (ctx: ExtensionContext, text: string, level: "info" | "warning") => void;
  now?: () => number;
  /** Async compaction's outlook (`src/compaction/cooperation.ts`); absent: the budget trigger ignores compaction. */
  compactionOutlook?: () => CompactionOutlook | undefined;
  /** Cache discipline's edge (request facts, decision log); absent: flushes apply everything. */
  discipline?: {
    facts(ctx: ExtensionContext): DisciplineFacts;
    recordFlush(outcome: DisciplineOutcome, rewrote: boolean): void;
  };
}

/** Everything the runtime remembers for one session; the pieces read and update it in place. */
export interface PruningMemory {
  state: KeeperState;
  recall: RecallIndex;
  diagnostics: string[];
  report: FlushReport | undefined;
  tokensAtLastFlush: number;
  /** Async compaction handoffs already accounted for in `tokensAtLastFlush`. */
  compactionHandoffsSeen: number;
  /** Aborts the running flush's summarizer (set while it summarizes). */
  abort: AbortController | undefined;
  /** Summaries already made, by batch key: a re-run flush does not pay for them twice. */
  readonly summaryCache: Map<string, BatchSummary>;
  /** Summarizer notices already shown, so each is shown once. */
  readonly notices: Set<string>;
}

export function emptyPruningMemory(): PruningMemory {
  return {
    state: emptyState(),
    recall: emptyRecallIndex(),
    diagnostics: [],
    report: undefined,
    tokensAtLastFlush: 0,
    compactionHandoffsSeen: 0,
    abort: undefined,
    summaryCache: new Map(),
    notices: new Set(),
  };
}
