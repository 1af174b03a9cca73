/**
 * The engine's state and its named transitions — the internals of `step` (step.ts), the one
 * entry point the live host and the replay drive (`index.ts` exports `step`, not these).
 * Each transition is `(state, input) → { state, … }` over plain data.
 *
 *   render        the `context` render; on a cold cache first the cold re-plan (triggers.ts),
 *                 whose entries and spill files come back as `persist` — the host writes the
 *                 spills, then appends the entries, once the request is built
 *   usage         the provider's usage of the answer (unannounced losses)
 *   compacted     Pi compacted: drop state outside the context, the next request is cold
 *   startFlush /  a flush, straight: capture → [summaries] → propose → decide → apply →
 *   completeFlush entries (flush.ts); `adoptFlush` takes the result into the state
 */
import { appendGateDecision, emptyGateDecisionLog } from "../discipline/gate-log.ts";
import type { GateDecisionLog } from "../discipline/schema.ts";
import { lastAssistantIndex } from "../discipline/history-view.ts";
import type { CaptureResult } from "../flush/capture.ts";
import { withClosingMessage } from "../flush/capture.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import { emptyRecallIndex, type RecallIndex, type SpillOptions } from "../recall/recall-index.ts";
import { timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { emptyCacheLedger, ledgerOnUsage, nearerRewrite, type CacheLedger } from "./cache-ledger.ts";
import { thinkingPolicyFor, type ModelIdentityInput } from "./config.ts";
import type { DisciplineFacts } from "./decide.ts";
import { beginFlush, finishFlush, type FlushRenders, type FlushResult } from "./flush.ts";
import { renderAhead, renderWithMemo, type RenderMemo } from "./render-memo.ts";
import { keeperRender, type KeeperRenderInput, type PartFault } from "./render.ts";
import { emptyWireLog, wireLogOnAnswer, type WireLog } from "./wire-log.ts";
import { initialCompactionState, type CompactionState } from "./compaction/types.ts";
import { outlookOf } from "./compaction/job.ts";
import { requestsUntilCompaction } from "../compaction/cooperation.ts";
import type { FlushDecision } from "../flush/plan.ts";
import { coldReplanDue, keepColdPlan, type BudgetBase, type LoopFlushMark } from "./triggers.ts";
import { slotsByRawIndex } from "../discipline/history-view.ts";

export interface EngineState {
  keeper: KeeperState;
  recall: RecallIndex;
  ledger: CacheLedger;
  gateLog: GateDecisionLog;
  /** The last render: what the request carried (seam placement, the gate's "sent"). */
  lastRender: { raw: readonly ContextMessage[]; rendered: readonly ContextMessage[]; state: KeeperState } | undefined;
  /** What the next render may reuse of the last one between flushes (render-memo.ts). */
  renderMemo: RenderMemo | undefined;
  /** Where the budget trigger counts from (live: Pi's context tokens after the last flush). */
  budget: BudgetBase;
  /** Where the last flush inside a tool loop ran (the in-loop trigger's spacing). */
  loopFlush: LoopFlushMark | undefined;
  /** The running flush's capture and the keeper state it was taken from (reused at its plan while still valid). */
  flushing: { capture: CaptureResult; keeper: KeeperState; removes: number } | undefined;
  /** Cold re-plans a render adopted, committed (spills, then entries) once the request is built. */
  replans: FlushResult[];
  /** The requests' cache diagnostics (`/keeper cache`). */
  wire: WireLog;
  /** What the last flush did (`/keeper stats`, `/keeper now`). */
  lastFlush: FlushReport | undefined;
  /** Problems met reading the saved state or writing spill files (`/keeper`'s "saved state"). */
  problems: string[];
  /** Notices already shown (each is shown once per session runtime). */
  shown: string[];
  /** Async compaction's job and what its hooks coordinate through (`compaction/`). */
  compaction: CompactionState;
}

/** What starts a flush; "cold": a re-plan without new summaries at a request whose cache is already lost. */
export type FlushTrigger = "request-end" | "budget" | "loop" | "manual" | "cold";

export interface FlushReport {
  trigger: FlushTrigger;
  batches: number;
  decisions: FlushDecision[];
  persistedEntries: number;
  durationMs: number;
  /** Estimated tokens the flush removed from every later request (its addition to `stats.tokensSavedEstimate`). */
  tokensSaved?: number;
}

export function initialEngineState(over: Partial<EngineState> = {}): EngineState {
  return {
    keeper: emptyState(),
    recall: emptyRecallIndex(),
    ledger: emptyCacheLedger(),
    gateLog: emptyGateDecisionLog(),
    lastRender: undefined,
    renderMemo: undefined,
    budget: { tokensAtLastFlush: 0, handoffsSeen: 0 },
    loopFlush: undefined,
    flushing: undefined,
    replans: [],
    wire: emptyWireLog(),
    lastFlush: undefined,
    problems: [],
    shown: [],
    compaction: initialCompactionState(),
    ...over,
  };
}

/** Flushes run when pruning is on, or when the thinking strip is on for this model (its boundary moves only at flushes). */
export function flushesActive(settings: KeeperSettings, model: ModelIdentityInput | undefined): boolean {
  return settings.enabled && (settings.pruning.enabled || thinkingPolicyFor(settings, model).strip);
}

export const disciplineOn = (settings: KeeperSettings): boolean => settings.enabled && settings.cache.discipline;

export interface SessionInput {
  settings: KeeperSettings;
  model: ModelIdentityInput | undefined;
  /** Counted renders (tests); default the real ones. */
  renders?: Partial<FlushRenders>;
  /** Where a part that threw is recorded (the step went on without it; `step` reports it once). */
  faults?: PartFault[];
}

export interface RenderInput extends SessionInput {
  /** The context Pi built for this request. */
  messages: ContextMessage[];
  now: number;
  /** The cache facts at this request (called only when cache discipline could re-plan). */
  facts: () => DisciplineFacts;
  flushInFlight: boolean;
  /** Record originals a cold re-plan hides (live: yes; replay: no recall). */
  recall: boolean;
  /** With `recall`: where huge originals a cold re-plan hides are spilled (as a flush spills them). */
  spill?: SpillOptions;
}

export interface RenderOutput {
  state: EngineState;
  /** The messages to send: the very input array when nothing is due. */
  rendered: ContextMessage[];
  /** A cold re-plan to persist once the request is built (never from inside the render): its spills, then its entries. */
  persist: FlushResult | undefined;
}

/**
 * A memoized render, each part isolated: a render in which a part threw is not remembered
 * (the next one renders in full), and a throw in the memo's own reuse falls back to the full
 * render (`keeperRender`, guarded itself).
 */
function guardedRender(input: KeeperRenderInput, memo: RenderMemo | undefined, renderer: typeof renderWithMemo): { rendered: ContextMessage[]; memo: RenderMemo | undefined } {
  const faults: PartFault[] = [];
  let out: { rendered: ContextMessage[]; memo: RenderMemo | undefined };
  try {
    out = renderer({ ...input, faults }, memo);
  } catch (error) {
    faults.push({ part: "pruning", error: error instanceof Error ? error.message : String(error) });
    out = { rendered: keeperRender({ ...input, faults }), memo: undefined };
  }
  input.faults?.push(...faults);
  return faults.length > 0 ? { rendered: out.rendered, memo: undefined } : out;
}

/** The `context` render, after the cold re-plan when the cache is already lost. */
export function render(state: EngineState, input: RenderInput): RenderOutput {
  const { settings, model, messages } = input;
  if (!settings.enabled) return { state, rendered: messages, persist: undefined };
  let next = state;
  let persist: FlushResult | undefined;
  const active = flushesActive(settings, model) && disciplineOn(settings) && !input.flushInFlight;
  // Facts only when they can matter (the ledger walk is not free).
  const facts = active ? input.facts() : undefined;
  if (facts && coldReplanDue({ flushesActive: true, disciplineOn: true, cold: facts.cold, flushInFlight: false })) {
    const done = completeFlush(state, {
      settings,
      model,
      branchMessages: messages,
      summaries: [],
      now: input.now,
      facts,
      label: `flush ${state.keeper.stats.flushes + 1} (cold)`,
      ...(input.recall ? { recall: input.spill ? { spill: input.spill } : {} } : {}),
      ...(input.renders ? { renders: input.renders } : {}),
      ...(input.faults ? { faults: input.faults } : {}),
    });
    // Only a re-plan that changes history is worth persisting here; a boundary move waits for the next flush.
    if (keepColdPlan(state.keeper.stats, done.result.nextState.stats)) {
      next = done.state;
      persist = done.result;
    }
  }
  const { rendered, memo } = guardedRender({ messages, state: next.keeper, settings, model, ...(input.faults ? { faults: input.faults } : {}) }, next.renderMemo, renderWithMemo);
  return { state: { ...next, lastRender: { raw: messages, rendered, state: next.keeper }, renderMemo: memo }, rendered, persist };
}

/**
 * After a flush is adopted (off the request path): the render of `messages` as the next request
 * will see it, remembered for that request (render-memo.ts `renderAhead`). Nothing is sent, so
 * `lastRender` (what the last request carried) stays.
 */
export function renderAheadOfPrompt(state: EngineState, input: SessionInput & { messages: ContextMessage[] }): { state: EngineState; rendered: ContextMessage[] } {
  const { settings, model, messages } = input;
  if (!settings.enabled) return { state, rendered: messages };
  const { rendered, memo } = guardedRender({ messages, state: state.keeper, settings, model, ...(input.faults ? { faults: input.faults } : {}) }, state.renderMemo, renderAhead);
  return { state: { ...state, renderMemo: memo }, rendered };
}

export function observeUsage(state: EngineState, message: ContextMessage): EngineState {
  const ledger = ledgerOnUsage(state.ledger, message);
  const wire = wireLogOnAnswer(state.wire, message, state.ledger.lastKey?.at);
  return ledger === state.ledger && wire === state.wire ? state : { ...state, ledger, wire };
}

/** Pi compacted (or the context lost messages): drop what left it; the next request writes everything. */
export function compacted(state: EngineState, context: readonly ContextMessage[]): EngineState {
  return { ...state, keeper: dropStateOutsideContext(state.keeper, liveOccurrenceKeys(context)), ledger: { ...state.ledger, compacted: true } };
}

export interface StartFlushInput extends SessionInput {
  branchMessages: readonly ContextMessage[];
  closingMessage?: ContextMessage;
}

/**
 * Step 1 of a flush: drop state for calls that left the context (a compaction applied as a
 * turn_end draft fires no session_compact), then capture the finished batches once.
 */
export function startFlush(state: EngineState, input: StartFlushInput): { state: EngineState; capture: CaptureResult } {
  const next = outsideContextDropped(state, input.branchMessages);
  return { state: next, capture: beginFlush({ state: next.keeper, branchMessages: input.branchMessages, closingMessage: input.closingMessage, settings: input.settings, model: input.model }) };
}

export interface CompleteFlushInput extends SessionInput {
  branchMessages: readonly ContextMessage[];
  closingMessage?: ContextMessage;
  /** `beginFlush` over the same state and branch (absent: captured here, as a cold re-plan does). */
  capture?: CaptureResult;
  /** Tokens an in-loop flush's candidates remove (set at its begin): a compaction is forecast from the context it leaves. */
  removes?: number;
  summaries: readonly BatchSummary[];
  now: number;
  /** Cache facts at the flush; used when cache discipline is on. */
  facts: DisciplineFacts | undefined;
  label: string;
  /** Extend the recall index (live); `spill` for huge originals. Absent: no recall (the replay). */
  recall?: { spill?: SpillOptions };
}

/**
 * What the last request carried, when the engine still holds it: its render of the branch up
 * to the last assistant message — the bytes sent, even when a flush was adopted since (a
 * queued flush: the earlier flush's rewrite is then a forced bust the gate sees). Undefined
 * when the engine rendered no request of this branch (a restore, a compaction, a tree move).
 */
function rememberedSent(state: EngineState, branch: readonly ContextMessage[]): readonly ContextMessage[] | undefined {
  const last = state.lastRender;
  if (!last) return undefined;
  const upTo = Math.max(0, lastAssistantIndex(branch));
  // The next prompt's request may have gone out while the flush ran: its render carries the same
  // prefix (no flush was adopted in between), and the gate reads only the messages before upTo.
  if (last.raw.length < upTo) return undefined;
  for (let i = 0; i < upTo; i++) {
    const a = last.raw[i];
    const b = branch[i];
    if (a !== b && (a.role !== b.role || timestampOf(a) !== timestampOf(b))) return undefined;
  }
  return last.rendered;
}

/**
 * Tokens each raw message of `branch` rendered to in the last request (up to its last assistant
 * message), when the engine still holds that request's render. The branch may hold system
 * messages the `context` event leaves out (Pi's persisted system prompt): they count 0, the
 * system prompt is sent before the messages.
 */
export function sentTokensOf(state: EngineState, branch: readonly ContextMessage[]): number[] | undefined {
  const last = state.lastRender;
  if (!last) return undefined;
  const upTo = Math.max(0, lastAssistantIndex(branch));
  const slots = slotsByRawIndex(last.raw, [...last.rendered]);
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < upTo; i++) {
    const b = branch[i]!;
    const a = last.raw[j];
    if (a !== undefined && (a === b || (a.role === b.role && timestampOf(a) === timestampOf(b)))) out.push(slots[j++]!.tokens);
    else if (b.role === "system") out.push(0);
    else return undefined;
  }
  return j === last.raw.length ? out : undefined;
}

/** Steps 2–5 of a flush over the engine state; the state adopts the result. */
export function completeFlush(state: EngineState, input: CompleteFlushInput): { state: EngineState; result: FlushResult } {
  const { settings, model } = input;
  const discipline = disciplineOn(settings) && input.facts !== undefined;
  const world = withClosingMessage(input.branchMessages, input.closingMessage);
  // A capture taken before the summarizer's await is reused only while the branch still holds
  // every call it captured (a compaction applied meanwhile sends it back to capture again).
  const capture = input.capture && captureStillLive(input.capture, world) ? input.capture : undefined;
  const result = finishFlush({
    state: state.keeper,
    branchMessages: input.branchMessages,
    closingMessage: input.closingMessage,
    settings,
    model,
    summaries: input.summaries,
    now: input.now,
    ...(capture ? { capture } : {}),
    ...(discipline && input.facts
      ? { discipline: { cache: settings.cache, facts: untilCompaction(input.facts, state.compaction, settings.cache.horizonCap, input.removes ?? 0), label: input.label, sent: rememberedSent(state, world) } }
      : {}),
    ...(input.recall ? { recall: { index: state.recall, ...(input.recall.spill ? { spill: input.recall.spill } : {}) } } : {}),
    ...(input.renders ? { renders: input.renders } : {}),
    ...(input.faults ? { faults: input.faults } : {}),
  });
  return { state: adoptFlush(state, result), result };
}

/**
 * The flush's cache facts with the gate's horizon cut to the requests left before a compaction
 * replaces the prefix (`requestsUntilCompaction`): a rewrite must pay back before then. An
 * in-loop flush forecasts it from the context it leaves (`removes` fewer tokens), as its trigger did.
 */
function untilCompaction(facts: DisciplineFacts, compaction: CompactionState, defaultCap: number, removes: number): DisciplineFacts {
  const tokens = facts.context?.tokens;
  const left = requestsUntilCompaction(outlookOf(compaction), tokens === undefined ? undefined : Math.max(0, tokens - removes));
  const cap = facts.horizonCap ?? defaultCap;
  // The horizon counts the request about to be sent plus at most `cap` after it.
  return left === undefined || left - 1 >= cap ? facts : { ...facts, horizonCap: left - 1 };
}

/** Whether every call a capture holds is still in the branch (its batches can still be stubbed). */
export function captureStillLive(capture: CaptureResult, branch: readonly ContextMessage[]): boolean {
  const live = liveOccurrenceKeys(branch);
  return capture.batches.every((b) => b.calls.every((c) => live.has(c.occurrenceKey)));
}

/** The engine state without keeper state for calls that left the context (a compaction). */
export function outsideContextDropped(state: EngineState, context: readonly ContextMessage[]): EngineState {
  const keeper = dropStateOutsideContext(state.keeper, liveOccurrenceKeys(context));
  return keeper === state.keeper ? state : { ...state, keeper };
}

/**
 * The engine state with a flush's result adopted. The live host adopts it into the state it
 * holds after writing the spill files (requests may have been sent meanwhile).
 */
export function adoptFlush(state: EngineState, result: FlushResult): EngineState {
  let gateLog = state.gateLog;
  for (const e of result.outcome?.log ?? []) gateLog = appendGateDecision(gateLog, e);
  const ledger: CacheLedger = {
    ...state.ledger,
    ...(result.outcome ? { pending: result.outcome.pending, unsent: nearerRewrite(state.ledger.unsent, result.outcome.unsent) } : {}),
    rewroteSinceLast: state.ledger.rewroteSinceLast || result.rewrote,
  };
  return { ...state, keeper: result.nextState, recall: result.nextRecall ?? state.recall, gateLog, ledger };
}
