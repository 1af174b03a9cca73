/**
 * The keeper arm of a replay: the engine the live host drives (`src/engine/`), stepped with
 * the same events, read back from the recording (`recorded-events.ts`), request by request:
 *
 *   compacted (Pi compacted since the last request) → per turn that ended since: usage and
 *   message-end of its answer, then turn-end with the context's size → context (the render)
 *   → before-request → request-built
 *
 * The engine decides as live: an answer that closes the user's request gives a request-end
 * `flush` effect, the budget trigger a budget one (its baseline is the engine's, as live); a
 * flush's `summarize` effect says which batches go to the model. What is the replay's own is
 * performing the effects without Pi: a flush runs at once, its summaries from the injected
 * stand-in for a model summary (or the real extractive summarizer), no recall and no spill
 * files; and the facts a recording cannot give — the context's size (characters / 4 of the
 * messages), the cache losses read from the recorded usage, tools (not recorded).
 *
 * With cache discipline and `cache.seam` on, every serialized request gets the seam mark at
 * the end of the frozen history (the engine's `before-request`); whether the last request
 * carried it is the `seamActive` fact of the next flush. A cold cache is detected as live (the
 * engine's cache ledger): TTL expiry, a model switch, a thinking-level change, a compaction;
 * the render then re-plans as live.
 *
 * Pure: `stepKeeperReplay` is a reducer `(state, request) => {state, rendered}` and
 * `stepKeeperSeam` one `(state, body) => {state, body}`; the engine object only holds the
 * latest state for the replay hooks.
 */
import { ruleTtlMs } from "../cache/cache-rules.ts";
import type { CostModel } from "../cache/cost-model.ts";
import { TTL_5M_MS } from "../cache/pricing.ts";
import { toolsKeyDigest, transcriptToolNames } from "../cache/tool-changes.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import type { CacheKeySnapshot } from "../discipline/cold-cache.ts";
import { observedLossesInHistory } from "../discipline/observed-loss.ts";
import { timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { cacheFacts, effectOf, initialEngineState, keeperRender, step, type CacheSettings, type DisciplineFacts, type EngineEffect, type EngineState } from "../engine/index.ts";
import type { KeeperReplayConfig } from "./keeper-config.ts";
import { createRecallToolDefinition } from "../recall/tool.ts";
import { emptyRecallIndex } from "../recall/recall-index.ts";
import { compactionAt, contextTokensOf, contextUsageOf, renderSavingOf, turnsEndedAfter, type RenderSaving } from "./recorded-events.ts";
import type { ReplaySummarizer } from "./replay-summaries.ts";

/** What the replay knows about a request (model and recorded time). */
export interface KeeperRequestInfo {
  timestamp: number;
  provider: string;
  api: string;
  model: string;
  /** Pi's thinking level for the request (a change loses the cache). Absent: unknown, never a change. */
  thinkingLevel?: string;
  /** The request model's cost model (its cache rule and prices). Absent: Anthropic's 5-minute rule and prices. */
  costModel?: CostModel;
}

export interface KeeperReplayRequest {
  /** The context Pi built for the request (what the render receives: Pi's system messages included). */
  messages: ContextMessage[];
  requestIndex: number;
  info: KeeperRequestInfo;
}

/** "cold": a re-plan without new summaries when the cache is already lost (cache discipline). */
export type FlushReason = "request-end" | "budget" | "loop" | "cold";

export interface ReplayFlush {
  requestIndex: number;
  reason: FlushReason;
  /** Batches summarized. */
  batches: number;
  /** Of those, batches sent to the model summarizer (the injected stand-in). */
  modelBatches: number;
  /** Whether the flush changed rendered history (stubs, purges, chains or the thinking boundary). */
  rewrote: boolean;
  summarizerBilled: number;
}

export interface SummarizerTotals {
  /** Batches sent to the model summarizer (the others were summarized extractively, free). */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Billed-equivalent units (uncached input tokens of the session model). */
  billed: number;
}

export interface KeeperReplayState {
  /** The engine's state: the same one the live host keeps. */
  engine: EngineState;
  /** Timestamp of the newest answer whose events were stepped (−∞ before the first). */
  answeredThrough: number;
  /** When the compaction the last request's context started with was made (undefined: none). */
  compactedAt?: number;
  flushes: ReplayFlush[];
  summarizer: SummarizerTotals;
  /** Thinking level of the previous request, when the recording knew it (unknown is never a change). */
  previousThinkingLevel?: string;
  /** Estimated tokens of the previous request's rendered context (context pressure); 0 without cache discipline. */
  previousContextTokens: number;
  /** What the keeper's render left out of the last request: its answer's usage in the keeper arm is the recorded one less that (`contextUsageOf`). */
  savings: RenderSaving[];
  /** The last request's context (a compaction's turns before it are read over it). */
  lastContext?: ContextMessage[];
}

export function initialKeeperReplayState(): KeeperReplayState {
  return {
    engine: initialEngineState(),
    answeredThrough: Number.NEGATIVE_INFINITY,
    flushes: [],
    summarizer: { calls: 0, inputTokens: 0, outputTokens: 0, billed: 0 },
    previousContextTokens: 0,
    savings: [],
  };
}

export interface KeeperReplayDeps {
  config: KeeperReplayConfig;
  /** Stands in for the model summarizer: batches `summarizer.mode` sends to the model. */
  summarize: ReplaySummarizer;
  /** Context window of the request's model, for the budget trigger. Default 200k. */
  contextWindow?: (info: KeeperRequestInfo) => number;
  /**
   * Cache discipline (quantized boundary, piggybacking, gate, cold-cache re-plans), priced
   * with the recorded timestamps; with `seam` on, `stepKeeperSeam` marks the frozen boundary
   * of every serialized request as the live host does. Must be the settings' own `cache`.
   */
  discipline?: CacheSettings;
}

export const DEFAULT_CONTEXT_WINDOW = 200_000;

/**
 * What the extension adds to every request it is on for (Pi's estimate, characters / 4): the
 * `keeper_recall` tool's definition as Anthropic's Messages API carries it, and the line for it
 * in the system prompt's tool list.
 */
export const RECALL_TOOL_TOKENS = (() => {
  const tool = createRecallToolDefinition({ getStore: () => emptyRecallIndex(), getBranchMessages: () => [], readSpill: async () => "" });
  const schema = tool.parameters as { properties?: unknown; required?: unknown };
  const wire = { name: tool.name, description: tool.description, eager_input_streaming: true, input_schema: { type: "object", properties: schema.properties ?? {}, required: schema.required ?? [] } };
  return Math.ceil(JSON.stringify(wire).length / 4) + Math.ceil(`- ${tool.promptSnippet ?? ""}\n`.length / 4);
})();

/** The settings the engine runs with: cache discipline only when the arm asked for it. */
function engineSettings(deps: Pick<KeeperReplayDeps, "config" | "discipline">): KeeperReplayConfig["settings"] {
  const s = deps.config.settings;
  return deps.discipline ? s : { ...s, cache: { ...s.cache, discipline: false } };
}

function modelOf(info: KeeperRequestInfo): { provider: string; id: string; api: string } {
  return { provider: info.provider, id: info.model, api: info.api };
}

/** The cache key of a request as far as the recording knows it (tools are not recorded). */
function keyOf(state: KeeperReplayState, info: KeeperRequestInfo, messages: readonly ContextMessage[] | undefined): CacheKeySnapshot {
  const thinkingLevel = info.thinkingLevel ?? state.previousThinkingLevel ?? "";
  // The tools the recorded transcript declares, as the live host reads Pi's active tools (a change keys the cache only where it rewrites it).
  const toolsDigest = toolsKeyDigest(info.costModel?.toolChangesInPlace === true, transcriptToolNames(messages ?? []));
  return { at: info.timestamp, model: info.model, thinkingLevel, toolsDigest };
}

/** Entry lifetime under the request model's cache rule (default retention; Anthropic's 5 minutes when unknown). */
function ttlMsOf(info: KeeperRequestInfo): number {
  return info.costModel ? ruleTtlMs(info.costModel.rule, false) : TTL_5M_MS;
}

/** Cache facts at a request, from the engine's ledger and what only the recording knows. */
export function replayCacheFacts(state: KeeperReplayState, request: KeeperReplayRequest, contextWindow: number): DisciplineFacts {
  const current = keyOf(state, request.info, request.messages);
  const ledger = state.engine.ledger;
  // A level the recording did not know at the previous request is never a change.
  const last = ledger.lastKey && state.previousThinkingLevel === undefined ? { ...ledger.lastKey, thinkingLevel: current.thinkingLevel } : ledger.lastKey;
  const ttlMs = ttlMsOf(request.info);
  return cacheFacts(
    { ...ledger, lastKey: last },
    {
      current,
      ttlMs,
      ...(request.info.costModel ? { costModel: request.info.costModel } : {}),
      // What the last request carried (rendered), as Pi's usage reports it live.
      context: { tokens: state.previousContextTokens, window: contextWindow },
      // The recording's usage is bare Pi's: every low read within the TTL is an unannounced loss.
      observedLosses: observedLossesInHistory(request.messages, ttlMs),
    },
  );
}

/** Where a flush effect was given: why, the branch as the live flush would see it then, and Pi's context usage then. */
interface FlushAt {
  reason: "request-end" | "budget" | "loop";
  branch: ContextMessage[];
  usage: number | null;
}

/** A `flush` effect, performed at once: the straight line of `step` events, the summaries from the stand-in as the effect routes them. */
function flush(state: KeeperReplayState, at: FlushAt, request: KeeperReplayRequest, deps: KeeperReplayDeps, facts: DisciplineFacts | undefined): KeeperReplayState {
  const settings = engineSettings(deps);
  const model = modelOf(request.info);
  // The live flush sees the requests sent so far: the horizon of the recorded times before this request.
  const costModel = request.info.costModel;
  const summaryFacts = { requestTimes: state.engine.ledger.requestTimes, ttlMs: ttlMsOf(request.info), horizonCap: deps.config.summarizer.horizonCap, ...(costModel ? { costModel } : {}) };
  const started = step(state.engine, { type: "flush-begin", trigger: at.reason, settings, model, branchMessages: at.branch, summaryFacts });
  const { capture, routes } = effectOf(started, "summarize");
  const batches = capture.batches;
  const results = batches.map((b, i) => (routes[i] ? deps.summarize(b) : { summary: summarizeExtractively(b), billed: 0 }));
  const planned = step(started.state, {
    type: "flush-plan",
    settings,
    model,
    branchMessages: at.branch,
    summaries: results.map((r) => r.summary),
    now: request.info.timestamp,
    facts: deps.discipline ? facts : undefined,
    label: `request ${request.requestIndex} (${at.reason})`,
  });
  // No recall in the replay: no spill files to write, nothing fails. The budget counts from the context the flush saw.
  const { result } = effectOf(planned, "write-spills");
  // The budget counts from Pi's context usage as the flush is written. Live it is read then; a
  // flush without a model call is written before Pi stores the answer that triggered it, so the
  // replay takes the usage at the trigger (a summarizer call would read it later, timing the replay leaves out).
  const done = step(planned.state, { type: "flush-written", result, failed: [], contextTokens: at.usage ?? undefined });
  const billed = results.reduce((n, r) => n + r.billed, 0);
  const sent = routes.filter(Boolean).length;
  const s = state.summarizer;
  return {
    ...state,
    engine: done.state,
    flushes: [
      ...state.flushes,
      { requestIndex: request.requestIndex, reason: at.reason, batches: batches.length, modelBatches: sent, rewrote: result.rewrote, summarizerBilled: billed },
    ],
    summarizer: {
      calls: s.calls + sent,
      inputTokens: s.inputTokens + results.reduce((n, r) => n + r.summary.inputTokens, 0),
      outputTokens: s.outputTokens + results.reduce((n, r) => n + r.summary.outputTokens, 0),
      billed: s.billed + billed,
    },
  };
}

/** Perform the `flush` effects of one step, in order (`usage`: Pi's context usage when the step's Pi event fired). */
function performFlushes(state: KeeperReplayState, effects: readonly EngineEffect[], at: { branch: ContextMessage[]; usage: number | null }, request: KeeperReplayRequest, deps: KeeperReplayDeps, window: number): KeeperReplayState {
  let next = state;
  for (const e of effects) {
    if (e.kind !== "flush") continue;
    next = flush(next, { reason: e.trigger, ...at }, request, deps, deps.discipline ? replayCacheFacts(next, request, window) : undefined);
  }
  return next;
}

/** The turns of `messages` that ended since the last one stepped (and before `until`, when given), stepped in order. */
function stepTurns(state: KeeperReplayState, messages: ContextMessage[], until: number, request: KeeperReplayRequest, deps: KeeperReplayDeps, window: number): KeeperReplayState {
  const settings = engineSettings(deps);
  let next = state;
  for (const turn of turnsEndedAfter(messages, next.answeredThrough)) {
    if (turn.at >= until) break;
    const answer = messages[turn.answer]!;
    next = { ...next, engine: step(next.engine, { type: "usage", message: answer }).state, answeredThrough: turn.at };
    const ended = step(next.engine, { type: "message-end", settings, message: answer });
    // At `message_end` Pi has not stored the answer yet: its usage is the context's before it.
    next = performFlushes({ ...next, engine: ended.state }, ended.effects, { branch: messages.slice(0, turn.answer + 1), usage: contextUsageOf(messages.slice(0, turn.answer), next.savings) }, request, deps, window);
    const branch = messages.slice(0, turn.end + 1);
    // Live, the turn end steps only when Pi knows its context usage (not right after a compaction).
    const contextTokens = contextUsageOf(branch, next.savings);
    if (contextTokens === null) continue;
    const at = next;
    const turnEnd = step(next.engine, { type: "turn-end", settings, contextTokens, contextWindow: window, context: () => branch, facts: () => replayCacheFacts(at, request, window) });
    next = performFlushes({ ...next, engine: turnEnd.state }, turnEnd.effects, { branch, usage: contextTokens }, request, deps, window);
  }
  return next;
}

/**
 * What Pi fired since the last request, from the recording, in the order it fired: the turns
 * that ended before a compaction (over the branch as it was then: the last request's context
 * and what followed it), the compaction, then the turns after it — per turn its answer's usage
 * and message end, then the turn end, each stepped as the live host steps it, the flushes
 * they give performed at once.
 */
function stepRecordedEvents(state: KeeperReplayState, request: KeeperReplayRequest, deps: KeeperReplayDeps, window: number): KeeperReplayState {
  const messages = request.messages;
  let next = state;
  const compaction = compactionAt(messages);
  if (compaction !== undefined && compaction !== next.compactedAt) {
    if (next.lastContext) next = stepTurns(next, branchBefore(next.lastContext, messages, compaction), compaction, request, deps, window);
    next = { ...next, engine: step(next.engine, { type: "compacted", context: messages }).state, compactedAt: compaction };
  }
  return stepTurns(next, messages, Number.POSITIVE_INFINITY, request, deps, window);
}

/** The branch just before a compaction at `at`: the last request's context and the messages after it that came before the compaction. */
function branchBefore(previous: readonly ContextMessage[], now: readonly ContextMessage[], at: number): ContextMessage[] {
  const last = previous.reduce((t, m) => Math.max(t, timestampOf(m) ?? Number.NEGATIVE_INFINITY), Number.NEGATIVE_INFINITY);
  return [...previous, ...now.filter((m) => {
    const t = timestampOf(m);
    return t !== undefined && t > last && t < at && (m as { role?: string }).role !== "compactionSummary";
  })];
}

/** The keeper's render for one request: the very function the live `context` hook runs. */
export function renderForRequest(messages: ContextMessage[], keeper: KeeperState, config: KeeperReplayConfig, info: KeeperRequestInfo): ContextMessage[] {
  return keeperRender({ messages, state: keeper, settings: config.settings, model: modelOf(info) });
}

export function stepKeeperReplay(
  state: KeeperReplayState,
  request: KeeperReplayRequest,
  deps: KeeperReplayDeps,
): { state: KeeperReplayState; rendered: ContextMessage[] } {
  if (!deps.config.enabled) return { state, rendered: request.messages };
  const settings = engineSettings(deps);
  const window = (deps.contextWindow ?? (() => DEFAULT_CONTEXT_WINDOW))(request.info);
  let next = stepRecordedEvents(state, request, deps, window);
  const before = next.engine.keeper.stats.flushes;
  const out = step(next.engine, {
    type: "context",
    settings,
    model: modelOf(request.info),
    messages: request.messages,
    now: request.info.timestamp,
    facts: () => replayCacheFacts(next, request, window),
    flushInFlight: false,
    recall: false,
  });
  // A cold re-plan the render adopted waits in the engine's state for the request (nothing to write in a replay).
  const cold: ReplayFlush[] = out.state.replans.slice(next.engine.replans.length).map((r) => ({ requestIndex: request.requestIndex, reason: "cold" as const, batches: 0, modelBatches: 0, rewrote: r.rewrote, summarizerBilled: 0 }));
  const rendered = out.render ?? request.messages;
  next = {
    ...next,
    engine: out.state,
    flushes: out.state.keeper.stats.flushes > before ? [...next.flushes, ...cold] : next.flushes,
    ...(request.info.thinkingLevel !== undefined ? { previousThinkingLevel: request.info.thinkingLevel } : {}),
    previousContextTokens: deps.discipline ? contextTokensOf(rendered) : 0,
    // The last answer's request and the one before (at a message end the answer is not counted yet).
    savings: [renderSavingOf(request.info.timestamp, request.messages, rendered, RECALL_TOOL_TOKENS), ...next.savings].slice(0, 2),
    lastContext: request.messages,
  };
  return { state: next, rendered };
}

/**
 * The serialized request `stepKeeperReplay` just rendered, through the engine's `send` (the
 * cache ledger; the seam when the extension, cache discipline and `cache.seam` are on).
 */
export function stepKeeperSeam(
  state: KeeperReplayState,
  body: WireRequestBody,
  info: KeeperRequestInfo,
  deps: Pick<KeeperReplayDeps, "config" | "discipline">,
): { state: KeeperReplayState; body: WireRequestBody } {
  if (!deps.config.enabled) return { state, body };
  const settings = engineSettings(deps);
  const out = step(state.engine, { type: "before-request", payload: body, key: keyOf(state, info, state.lastContext), settings, model: { api: info.api, id: info.model } });
  // The request is built: the cold re-plans its render adopted are committed (no spill files in a replay).
  const built = step(out.state, { type: "request-built" });
  return { state: { ...state, engine: built.state }, body: out.request?.body ?? body };
}

/** The replay hooks (`transformContext`, `transformBody`) over the reducers. */
export interface KeeperReplayEngine {
  transformContext(messages: ContextMessage[], requestIndex: number, info: KeeperRequestInfo): ContextMessage[];
  transformBody(body: WireRequestBody, requestIndex: number, info: KeeperRequestInfo): WireRequestBody;
  state(): KeeperReplayState;
}

export function createKeeperReplayEngine(deps: KeeperReplayDeps): KeeperReplayEngine {
  let state = initialKeeperReplayState();
  return {
    transformContext(messages, requestIndex, info) {
      const step = stepKeeperReplay(state, { messages, requestIndex, info }, deps);
      state = step.state;
      return step.rendered;
    },
    transformBody(body, _requestIndex, info) {
      const step = stepKeeperSeam(state, body, info, deps);
      state = step.state;
      return step.body;
    },
    state: () => state,
  };
}
