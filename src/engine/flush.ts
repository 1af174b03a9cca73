/**
 * One flush, as a straight line shared by the live host and the replay:
 *
 *   capture once (`beginFlush`) → [the caller summarizes the batches] → propose → decide
 *   (the gate, when cache discipline is on) → apply → the entries to persist
 *
 * `finishFlush` builds the one entry a flush persists — its summaries, frontier delta (frozen
 * boundary included; a full checkpoint when due), stats and recall index delta — here and
 * nowhere else. Pure: the
 * summarizer already ran, the clock comes in as `now`, and spill files come back as data for
 * the host to write before it appends the entries (a stub never points at a missing file).
 * Renders go through injected functions, so a test can count them: at most 2 per flush (the
 * gate's before/after, which also measure the savings; without the gate, the savings
 * estimate's two), plus one when the caller does not remember what the last request carried.
 */
import { captureBatches, type CaptureResult } from "../flush/capture.ts";
import { applyFlush, proposeFlush, type FlushDecision, type FlushPlan, type ThinkingBoundaryFn } from "../flush/plan.ts";
import { renderContext } from "../prune/pipeline.ts";
import { prunedCallsOf } from "../recall/pruned-calls.ts";
import { recallDelta } from "../recall/recall-entries.ts";
import { recordOriginals, withoutFailedSpills, type RecallIndex, type SpillFailure, type SpillOptions, type SpillWrite } from "../recall/recall-index.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { withRecallDelta } from "../state/entries.ts";
import { type FlushRecord, type KeeperState } from "../state/schema.ts";
import type { BatchSummary, ToolBatch } from "../summarize/batch.ts";
import { computeThinkingBoundary } from "../thinking/index.ts";
import { pruneConfigFrom, thinkingPolicyFor, type ModelIdentityInput } from "./config.ts";
import { decideFlush, type CacheSettings, type DisciplineFacts, type DisciplineOutcome } from "./decide.ts";
import { keeperRender, type PartFault, type StrippedFrom } from "./render.ts";

export interface FlushInputs {
  state: KeeperState;
  branchMessages: readonly ContextMessage[];
  /** The closing assistant message Pi has not persisted yet (message_end fires first). */
  closingMessage?: ContextMessage;
  settings: KeeperSettings;
  model: ModelIdentityInput | undefined;
}

/** Step 1: the finished batches this flush summarizes (captured once; `finishFlush` reuses it). */
export function beginFlush(inputs: FlushInputs): CaptureResult {
  return captureBatches({
    branchMessages: inputs.branchMessages,
    closingMessage: inputs.closingMessage,
    state: inputs.state,
    config: pruneConfigFrom(inputs.settings),
  });
}

/** The thinking strip's boundary at a flush; a throw keeps the previous one (recorded in `faults`). */
export function thinkingBoundaryFnFor(settings: KeeperSettings, model: ModelIdentityInput | undefined, faults?: PartFault[]): ThinkingBoundaryFn | undefined {
  if (!thinkingPolicyFor(settings, model).strip) return undefined;
  const keep = settings.thinkingStrip.keepLastTurns;
  return ({ assistantTimestamps, previous }) => {
    try {
      return computeThinkingBoundary(assistantTimestamps, keep, previous);
    } catch (error) {
      faults?.push({ part: "thinking", error: error instanceof Error ? error.message : String(error) });
      return previous;
    }
  };
}

/** Counts renders when a test injects them; both kinds a flush does go through them. */
export interface FlushRenders {
  /** The `context` render (thinking strip included), for the gate's measurements; it records what the strip replaced in `strippedFrom`. */
  keeper: (messages: ContextMessage[], state: KeeperState, strippedFrom: StrippedFrom) => ContextMessage[];
  /** The pruning render without the thinking strip, for the savings estimate without the gate. */
  prune: (input: Parameters<typeof renderContext>[0]) => ContextMessage[];
}

export interface FinishFlushInput extends FlushInputs {
  /** `beginFlush` of the same inputs; absent: no new summaries (a cold re-plan). */
  capture?: CaptureResult;
  summaries: readonly BatchSummary[];
  now: number;
  /** Cache discipline's gate; absent: everything proposed applies. */
  discipline?: {
    cache: CacheSettings;
    facts: DisciplineFacts;
    /** Names the flush in the gate log ("flush 12 (request-end)"). */
    label: string;
    /** What the last request carried, when the caller remembers it (saves one render). */
    sent?: readonly ContextMessage[];
  };
  /** The recall index to extend with every original the new state hides. Absent: no recall (the replay). */
  recall?: { index: RecallIndex; spill?: SpillOptions };
  renders?: Partial<FlushRenders>;
  /** Where a part that threw is recorded (the flush went on without it). */
  faults?: PartFault[];
}

/** A custom session entry to append (`pi.appendEntry(customType, data)`). */
export interface PersistEntry {
  customType: string;
  data: unknown;
}

export interface FlushResult {
  plan: FlushPlan;
  nextState: KeeperState;
  decisions: FlushDecision[];
  /**
   * What to append: the flush's one `context-keeper/flush` entry (summaries, frontier, stats and
   * recall delta in one line, so the index knows an original as soon as a stub hides it), or
   * nothing when the flush changed nothing.
   */
  entries: PersistEntry[];
  nextRecall: RecallIndex | undefined;
  /** Side files to write before the entries are appended. */
  spills: SpillWrite[];
  outcome: DisciplineOutcome | undefined;
  /** The flush changed rendered history. */
  rewrote: boolean;
}

/** Steps 2–5: propose → decide → apply → entries. */
export function finishFlush(input: FinishFlushInput): FlushResult {
  const config = pruneConfigFrom(input.settings);
  const keeper: FlushRenders["keeper"] =
    input.renders?.keeper ?? ((messages, state, strippedFrom) => keeperRender({ messages, state, settings: input.settings, model: input.model, strippedFrom, ...(input.faults ? { faults: input.faults } : {}) }));
  const draft = proposeFlush({
    state: input.state,
    branchMessages: input.branchMessages,
    closingMessage: input.closingMessage,
    summaries: input.summaries,
    config,
    now: input.now,
    thinkingBoundary: thinkingBoundaryFnFor(input.settings, input.model, input.faults),
    // Without a capture (a cold re-plan) the proposal captures itself: duplicates still alias.
    ...(input.capture ? { capture: input.capture } : {}),
  });
  const d = input.discipline;
  const decided = d
    ? decideFlush({
        cache: d.cache,
        facts: d.facts,
        now: input.now,
        label: d.label,
        draft,
        trial: applyFlush(draft, { measure: false }).nextState,
        render: keeper,
        sent: d.sent,
        thinkingStripOn: thinkingPolicyFor(input.settings, input.model).strip,
      })
    : undefined;
  // Under the gate the savings come from its two renders; without it, from two savings renders.
  const plan = applyFlush(draft, {
    ...(decided
      ? { applied: decided.applied, frozenThroughTimestamp: decided.outcome.boundary?.frozenThroughTimestamp, tokensSaved: decided.tokensSaved, seamThroughTimestamp: decided.outcome.seamThroughTimestamp }
      : input.renders?.prune
        ? { render: input.renders.prune }
        : {}),
  });
  const hidden = [...(input.capture?.batches ?? []).flatMap((b: ToolBatch) => b.calls), ...prunedCallsOf(input.branchMessages, plan.nextState)];
  const recorded = input.recall ? recordOriginals(input.recall.index, { calls: hidden, spill: input.recall.spill }) : undefined;
  const recallAdded = input.recall && recorded ? recallDelta(input.recall.index, recorded.index) : undefined;
  return {
    plan,
    nextState: plan.nextState,
    decisions: plan.decisions,
    entries: recallAdded ? [withRecallDelta(plan.entriesToPersist[0], recallAdded)] : plan.entriesToPersist,
    nextRecall: recorded?.index,
    spills: recorded?.spills ?? [],
    outcome: decided?.outcome,
    rewrote: plan.nextState.stats.rewritesCaused > input.state.stats.rewritesCaused,
  };
}

/**
 * The result as it commits when some spill files could not be written: a spill is a second
 * copy (the original stays in the session file), so the recall index and its delta entry keep
 * everything but the side file of those originals. The same result when nothing failed.
 */
export function withoutSpillFailures(result: FlushResult, failed: readonly SpillFailure[]): FlushResult {
  if (failed.length === 0) return result;
  const entries = result.entries.map((e) => {
    const recall = (e.data as FlushRecord).recall;
    return recall ? { ...e, data: { ...(e.data as FlushRecord), recall: withoutFailedSpills(recall, failed) } } : e;
  });
  const nextRecall = result.nextRecall && withoutFailedSpills(result.nextRecall, failed);
  const paths = new Set(failed.map((f) => f.path));
  return { ...result, entries, nextRecall, spills: result.spills.filter((s) => !paths.has(s.path)) };
}
