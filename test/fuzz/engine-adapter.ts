/**
 * The fuzzer's only door into the extension: render, flush, restore, compaction drop,
 * recall and the seam, over plain data. Everything else in `test/fuzz/` talks to these
 * functions, so a change of the engine's surface means rewriting this file alone.
 *
 * It drives the engine through the entry point the live host drives (`step` in
 * `src/engine/step.ts`: flush-begin → summaries (injected) → flush-plan: propose → decide
 * (cache discipline, when on) → apply → the entries to persist, recall delta first), minus
 * Pi and the clock.
 */
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { TTL_5M_MS } from "../../src/cache/pricing.ts";
import type { WireRequestBody } from "../../src/cache/wire-types.ts";
import { piCompactionPrimitives } from "../../src/host/compaction-runtime.ts";
import { prepareCompaction } from "../../src/compaction/prepare.ts";
import { detectColdCache, type CacheKeySnapshot } from "../../src/discipline/cold-cache.ts";
import { messageChars } from "../../src/discipline/history-view.ts";
import { placeSeamAtFrozenBoundary, messagePrefixesOf, type PreviousSeam } from "../../src/discipline/seam-placement.ts";
import type { ModelIdentityInput } from "../../src/engine/config.ts";
import type { DisciplineFacts } from "../../src/engine/decide.ts";
import type { PersistEntry } from "../../src/engine/flush.ts";
import * as engine from "../../src/engine/index.ts";
import { liveOccurrenceKeys } from "../../src/prune/occurrence.ts";
import { restoreRecallIndex } from "../../src/recall/recall-entries.ts";
import { emptyRecallIndex, type RecallIndex, type SpillWrite } from "../../src/recall/recall-index.ts";
import { executeRecall, type RecallResult } from "../../src/recall/tool.ts";
import { purgedArgumentsOnlyKeys } from "../../src/recall/pruned-calls.ts";
import type { ContextMessage } from "../../src/session/messages.ts";
import type { KeeperSettings } from "../../src/settings/schema.ts";
import { dropStateOutsideContext } from "../../src/state/drop-outside-context.ts";
import { restoreState } from "../../src/state/entries.ts";
import { emptyState, seamThroughOf, type KeeperState } from "../../src/state/schema.ts";
import type { BatchSummary, ToolBatch } from "../../src/summarize/batch.ts";

export type { DisciplineFacts, PersistEntry, RecallResult, PreviousSeam };
export type Model = ModelIdentityInput & { api: string };

/** What one session runtime of the extension holds between events. */
export interface EngineState {
  keeper: KeeperState;
  recall: RecallIndex;
}

export function initialEngineState(): EngineState {
  return { keeper: emptyState(), recall: emptyRecallIndex() };
}

export interface RenderInput {
  messages: ContextMessage[];
  state: EngineState;
  settings: KeeperSettings;
  model: Model;
}

/** The `context` hook's answer: the messages the request carries. */
export function render(input: RenderInput): ContextMessage[] {
  return engine.keeperRender({ messages: input.messages, state: input.state.keeper, settings: input.settings, model: input.model });
}

/** Whether a flush does anything for this model (pruning on, or the thinking strip strips). */
export function flushesActive(settings: KeeperSettings, model: Model): boolean {
  return engine.flushesActive(settings, model);
}

export function budgetFires(input: { settings: KeeperSettings; contextTokens: number; tokensAtLastFlush: number; contextWindow: number }): boolean {
  return engine.budgetTriggerFires(input);
}

export type LoopFlushMark = engine.LoopFlushMark;

/** The loop the branch ends in, as a mark at its current step (the budget flush marks it too). */
export function loopMarkOf(branch: readonly ContextMessage[]): LoopFlushMark | undefined {
  return engine.loopMarkOf(branch);
}

/** The in-loop trigger at a turn end (`branch` ends with the results the model has not answered); `mark`: where it fired. */
export function loopFlushFires(input: { settings: KeeperSettings; branch: ContextMessage[]; state: EngineState; facts: DisciplineFacts | undefined; last: engine.LoopFlushMark | undefined }): engine.LoopFlushMark | undefined {
  const due = engine.loopFlushDue({ settings: input.settings, messages: input.branch, keeper: input.state.keeper, facts: input.facts, last: input.last });
  return due.fire ? engine.loopMarkOf(input.branch) : undefined;
}

/** The engine's state around the fuzzer's (the cache ledger and gate log are the fuzzer's own). */
const engineStateOf = (state: EngineState): engine.EngineState => engine.initialEngineState({ keeper: state.keeper, recall: state.recall });

export interface FlushInput {
  state: EngineState;
  /** The context Pi would build now (compactions applied), ending with the closing message. */
  branch: ContextMessage[];
  settings: KeeperSettings;
  model: Model;
  now: number;
  /** One summary per batch, in order (the summarizer effect, faults included). */
  summarize: (batches: readonly ToolBatch[]) => Promise<BatchSummary[]>;
  /** Cache facts at the flush; absent when cache discipline is off. */
  discipline?: DisciplineFacts;
  /** Where the side file of an original of `sha256` goes. */
  spillPathFor: (sha256: string) => string;
  /** What started the flush ("loop": summarized extractively). */
  trigger?: engine.FlushTrigger;
}

export interface FlushOutput {
  state: EngineState;
  /** Entries to append, in this order (a crash may cut the list anywhere). */
  entries: PersistEntry[];
  /** Side files to write before any entry is appended. */
  spills: SpillWrite[];
  batches: number;
}

export async function flush(input: FlushInput): Promise<FlushOutput> {
  const { settings, model, branch, now } = input;
  const begun = engine.step(engineStateOf(input.state), { type: "flush-begin", settings, model, branchMessages: branch, ...(input.trigger ? { trigger: input.trigger } : {}) });
  const { capture } = engine.effectOf(begun, "summarize");
  const summaries = await input.summarize(capture.batches);
  const planned = engine.step(begun.state, {
    type: "flush-plan",
    settings,
    model,
    branchMessages: branch,
    summaries,
    now,
    facts: input.discipline,
    label: `fuzz flush ${begun.state.keeper.stats.flushes + 1}`,
    recall: { spill: { thresholdBytes: settings.recall.spillThresholdBytes, pathFor: (_call, sha) => input.spillPathFor(sha) } },
  });
  // The fuzzer writes the spills itself (faults included) before the entries, as the host does.
  const { result } = engine.effectOf(planned, "write-spills");
  return {
    state: { keeper: result.nextState, recall: result.nextRecall ?? input.state.recall },
    entries: result.entries,
    spills: result.spills,
    batches: capture.batches.length,
  };
}

/**
 * Before a render, when the cache is already lost and cache discipline is on: the engine's
 * cold re-plan (the `context` step in `src/engine/step.ts`, as the live `context` hook runs it,
 * committed at `request-built`). Undefined when nothing changes history.
 */
export function coldReplan(input: {
  state: EngineState;
  branch: ContextMessage[];
  settings: KeeperSettings;
  model: Model;
  now: number;
  facts: DisciplineFacts;
  spillPathFor: (sha256: string) => string;
}): { state: EngineState; entries: PersistEntry[]; spills: SpillWrite[] } | undefined {
  const out = engine.step(engineStateOf(input.state), {
    type: "context",
    settings: input.settings,
    model: input.model,
    messages: input.branch,
    now: input.now,
    facts: () => input.facts,
    flushInFlight: false,
    recall: true,
    spill: { thresholdBytes: input.settings.recall.spillThresholdBytes, pathFor: (_call, sha) => input.spillPathFor(sha) },
  });
  // The re-plan the render adopted is handed out once the request is built, as the live host commits it.
  const built = engine.step(out.state, { type: "request-built" });
  const replan = built.effects.find((e) => e.kind === "commit-replans");
  const r = replan?.kind === "commit-replans" ? replan.results[0] : undefined;
  if (!r) return undefined;
  return { state: { keeper: r.nextState, recall: r.nextRecall ?? input.state.recall }, entries: r.entries, spills: r.spills };
}

/** Session start or `/tree`: the state rebuilt from the branch's entries alone. */
export function restore(input: { branchEntries: readonly unknown[]; context: readonly ContextMessage[] }): { state: EngineState; diagnostics: string[] } {
  const restored = restoreState(input.branchEntries);
  const recall = restoreRecallIndex(input.branchEntries);
  return {
    state: { keeper: dropStateOutsideContext(restored.state, liveOccurrenceKeys(input.context)), recall: recall.index },
    diagnostics: [...restored.diagnostics, ...recall.diagnostics],
  };
}

/** Refs whose purged arguments (not their output) the render hides: recall brings back the arguments. */
export const argumentsOnlyRefs = (state: EngineState): ReadonlySet<string> => purgedArgumentsOnlyKeys(state.keeper);

/** `session_compact`: forget what left the context. */
export function afterCompaction(state: EngineState, context: readonly ContextMessage[]): EngineState {
  return { ...state, keeper: dropStateOutsideContext(state.keeper, liveOccurrenceKeys(context)) };
}

/** `keeper_recall` as the model calls it. */
export function recall(input: {
  state: EngineState;
  ref: string;
  offset?: number;
  limit?: number;
  branchMessages: readonly ContextMessage[];
  readSpill: (path: string) => Promise<string>;
}): Promise<RecallResult> {
  return executeRecall({
    params: { ref: input.ref, ...(input.offset !== undefined ? { offset: input.offset } : {}), ...(input.limit !== undefined ? { limit: input.limit } : {}) },
    store: input.state.recall,
    branchMessages: input.branchMessages,
    readSpill: input.readSpill,
    purgedArguments: purgedArgumentsOnlyKeys(input.state.keeper),
  });
}

/** Whether the recall index keeps a side file of this ref's original. */
export function isSpilled(state: EngineState, ref: string): boolean {
  return state.recall.entries[ref]?.spillPath !== undefined;
}

/** Occurrence keys whose output a state hides or points at by ref. */
export function hiddenKeys(state: EngineState): Set<string> {
  const f = state.keeper.frontier;
  const keys = new Set<string>([...f.stubbedKeys, ...Object.keys(f.aliases), ...f.purgedErrorKeys]);
  for (const chain of f.compressedChains) for (const k of chain.memberKeys) keys.add(k);
  return keys;
}

/** The `before_provider_request` seam, as the live cache runtime places it. */
export function placeSeam(input: {
  body: WireRequestBody;
  rendered: readonly ContextMessage[];
  state: EngineState;
  settings: KeeperSettings;
  model: Model;
  previous?: PreviousSeam;
}): { body: WireRequestBody; seam: number; carried: PreviousSeam } {
  const { settings, body } = input;
  if (!settings.enabled || !settings.cache.discipline || !settings.cache.seam || input.model.api !== "anthropic-messages") {
    return { body, seam: -1, carried: { seamMessageIndex: -1, messagePrefixes: [] } };
  }
  const placed = placeSeamAtFrozenBoundary({
    body,
    rendered: input.rendered,
    frozenThroughTimestamp: seamThroughOf(input.state.keeper.frontier),
    api: input.model.api,
    modelId: input.model.id,
    ...(input.previous ? { previous: input.previous } : {}),
  });
  return {
    body: placed.body,
    seam: placed.seam,
    carried: { seamMessageIndex: Math.min(placed.seam, placed.body.messages.length - 1), messagePrefixes: messagePrefixesOf(placed.body) },
  };
}

/** Estimated tokens of a context (characters / 4, Pi's estimate), memoized per message. */
export function contextTokens(messages: readonly ContextMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += messageChars(m);
  return Math.ceil(chars / 4);
}

/** What the cache was keyed on at a request. */
export type CacheKey = CacheKeySnapshot;

/** The cache facts a flush decides with, as the live cache runtime derives them (5-minute TTL). */
export function cacheFacts(input: {
  requestTimes: readonly number[];
  previous: CacheKey | undefined;
  current: CacheKey;
  /** Pi compacted since the last request (the next one writes everything anyway). */
  compacted: boolean;
  contextTokens: number;
  contextWindow: number;
  seamActive: boolean;
}): DisciplineFacts {
  const verdict = detectColdCache({ previous: input.previous, current: input.current, ttlMs: TTL_5M_MS });
  return {
    requestTimes: input.requestTimes,
    cold: verdict.cold || input.compacted,
    ttl: "5m",
    ttlMs: TTL_5M_MS,
    context: { tokens: input.contextTokens, window: input.contextWindow },
    seamActive: input.seamActive,
  };
}

export const CACHE_TTL_MS = TTL_5M_MS;

/** Where a compaction of this branch cuts (Pi's preparation, as the extension rebuilds it), if it has anything to compact. */
export function compactionCut(branch: SessionEntry[], keepRecentTokens: number): { firstKeptEntryId: string; tokensBefore: number; summarized: number } | undefined {
  const prep = prepareCompaction(branch, { enabled: true, reserveTokens: 1_000, keepRecentTokens }, piCompactionPrimitives);
  if (!prep) return undefined;
  return { firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: prep.tokensBefore, summarized: prep.messagesToSummarize.length + prep.turnPrefixMessages.length };
}
