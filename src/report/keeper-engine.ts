/**
 * The keeper arm of a replay: the extension's real pure pipeline driven request by request
 * over the contexts Pi rebuilt from the recording.
 *
 * Flush points (where the live extension flushes):
 * - request end: the previous user request finished (its final assistant message came, then
 *   a new user prompt). The flush sees the branch up to, not including, the new prompt;
 * - budget trigger: inside a tool loop (the context ends with a tool result), when the
 *   engine's budget rule (`budgetTriggerFires`, over `src/flush/budget-trigger.ts`) fires for
 *   the raw branch's tokens (characters / 4, Pi's own estimate) and those older than the last
 *   flush. The flush sees the whole context.
 * A flush captures the finished batches (`captureBatches`), summarizes them as the live
 * extension would (`summarizer.mode`; under `auto`, `chooseSummarySource` with the request
 * horizon of the recorded request times decides per batch: the injected deterministic
 * stand-in for a model summary, or the real extractive summarizer), and plans the new state (`planFlush`, with the
 * thinking boundary when the thinking policy strips for the request's model).
 * Every request then renders with `renderContext` (stub-replace, error-purge,
 * chain-compress, thinking strip, pairing sweep) over the persisted state.
 *
 * With cache discipline and `cache.seam` on, every serialized request then gets the seam mark
 * at the end of the frozen history (the engine's `send`, lazy move included); whether the
 * last request carried it is the `seamActive` fact of the next flush. A cold cache is
 * detected as live (the engine's cache ledger): TTL expiry, a model switch or a
 * thinking-level change; the render then re-plans as live (`coldReplanDue`).
 *
 * Everything above is the engine the live host drives (`src/engine/`): the flush straight
 * line, the summary routes, the budget formula, the cache facts and the cold-cache rule. What
 * is the replay's own: where the recording says a flush would have fired (`flushPointOf`),
 * the summarizer stand-in, and the facts a recording cannot give (context size from the
 * rendered characters, losses read from the recorded usage).
 *
 * Pure: `stepKeeperReplay` is a reducer `(state, request) => {state, rendered}` and
 * `stepKeeperSeam` one `(state, body) => {state, body}`; the engine object only holds the
 * latest state for the replay hooks.
 */
import { ruleTtlMs } from "../cache/cache-rules.ts";
import type { CostModel } from "../cache/cost-model.ts";
import { TTL_5M_MS } from "../cache/pricing.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import type { CacheKeySnapshot } from "../discipline/cold-cache.ts";
import { messageChars } from "../discipline/history-view.ts";
import { observedLossesInHistory } from "../discipline/observed-loss.ts";
import { type ContextMessage, isAssistant, isToolResult, isUser, timestampOf } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { budgetTriggerFires, cacheFacts, effectOf, initialEngineState, keeperRender, step, summaryRoutes, type CacheSettings, type DisciplineFacts, type EngineState } from "../engine/index.ts";
import type { KeeperReplayConfig } from "./keeper-config.ts";
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
  /** The context Pi built for the request (what the `context` hook receives). */
  messages: ContextMessage[];
  requestIndex: number;
  info: KeeperRequestInfo;
}

/** "cold": a re-plan without new summaries when the cache is already lost (cache discipline). */
export type FlushReason = "request-end" | "budget" | "cold";

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
  /** Timestamp of the newest message the last flush saw (−∞ before the first flush). */
  flushedThrough: number;
  flushes: ReplayFlush[];
  summarizer: SummarizerTotals;
  /** Thinking level of the previous request, when the recording knew it (unknown is never a change). */
  previousThinkingLevel?: string;
  /** Estimated tokens of the previous request's rendered context (context pressure). */
  previousContextTokens: number;
}

export function initialKeeperReplayState(): KeeperReplayState {
  return {
    engine: initialEngineState(),
    flushedThrough: Number.NEGATIVE_INFINITY,
    flushes: [],
    summarizer: { calls: 0, inputTokens: 0, outputTokens: 0, billed: 0 },
    previousContextTokens: 0,
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

/** Tokens (chars / 4) of the messages newer than `since`. */
export function tokensAddedSince(messages: readonly ContextMessage[], since: number): number {
  let chars = 0;
  for (const m of messages) {
    const t = timestampOf(m);
    if (t !== undefined && t > since) chars += messageChars(m);
  }
  return Math.ceil(chars / 4);
}

/** Whether the budget trigger fires for a context of `contextTokens`, `tokensAtLastFlush` of them there at the last flush. */
export type BudgetCheck = (contextTokens: number, tokensAtLastFlush: number) => boolean;

/** The replay's budget check: the engine's budget rule on the replay's settings and the request's window (absent: the trigger is off). */
export function budgetCheckFor(settings: KeeperSettings, contextWindow: number): BudgetCheck | undefined {
  if (!settings.pruning.budgetTrigger.enabled) return undefined;
  return (contextTokens, tokensAtLastFlush) => budgetTriggerFires({ settings, contextTokens, tokensAtLastFlush, contextWindow });
}

export interface FlushPoint {
  reason: FlushReason;
  /** The branch as the live flush would see it. */
  branch: ContextMessage[];
}

const newestTimestamp = (messages: readonly ContextMessage[]) =>
  messages.reduce((t, m) => Math.max(t, timestampOf(m) ?? Number.NEGATIVE_INFINITY), Number.NEGATIVE_INFINITY);

/**
 * Where (if at all) the live extension would have flushed before this request went out.
 * `budget`: the engine's budget rule for this request's window (absent: the trigger is off).
 */
export function flushPointOf(messages: ContextMessage[], state: KeeperReplayState, budget: BudgetCheck | undefined): FlushPoint | undefined {
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isAssistant(messages[i])) {
      lastAssistant = i;
      break;
    }
  }
  if (lastAssistant >= 0) {
    const prompt = messages.findIndex((m, i) => i > lastAssistant && isUser(m));
    const ended = timestampOf(messages[lastAssistant]) ?? Number.NEGATIVE_INFINITY;
    if (prompt >= 0 && ended > state.flushedThrough) return { reason: "request-end", branch: messages.slice(0, prompt) };
  }
  const last = messages[messages.length - 1];
  // Live, the budget trigger is checked at turn_end: after a turn's tool results.
  if (budget && last && isToolResult(last)) {
    // The raw branch stands in for Pi's usage estimate: its tokens now, and those older than the last flush.
    const contextTokens = tokensAddedSince(messages, Number.NEGATIVE_INFINITY);
    if (budget(contextTokens, contextTokens - tokensAddedSince(messages, state.flushedThrough))) return { reason: "budget", branch: messages };
  }
  return undefined;
}

/** The settings the engine runs with: cache discipline only when the arm asked for it. */
function engineSettings(deps: Pick<KeeperReplayDeps, "config" | "discipline">): KeeperReplayConfig["settings"] {
  const s = deps.config.settings;
  return deps.discipline ? s : { ...s, cache: { ...s.cache, discipline: false } };
}

function modelOf(info: KeeperRequestInfo): { provider: string; id: string; api: string } {
  return { provider: info.provider, id: info.model, api: info.api };
}

/** The cache key of a request as far as the recording knows it (tools are not recorded). */
function keyOf(state: KeeperReplayState, info: KeeperRequestInfo): CacheKeySnapshot {
  const thinkingLevel = info.thinkingLevel ?? state.previousThinkingLevel ?? "";
  return { at: info.timestamp, model: info.model, thinkingLevel, toolsDigest: "" };
}

/** Entry lifetime under the request model's cache rule (default retention; Anthropic's 5 minutes when unknown). */
function ttlMsOf(info: KeeperRequestInfo): number {
  return info.costModel ? ruleTtlMs(info.costModel.rule, false) : TTL_5M_MS;
}

/** Cache facts at a request, from the engine's ledger and what only the recording knows. */
export function replayCacheFacts(state: KeeperReplayState, request: KeeperReplayRequest, contextWindow: number): DisciplineFacts {
  const current = keyOf(state, request.info);
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

function flush(state: KeeperReplayState, point: FlushPoint, request: KeeperReplayRequest, deps: KeeperReplayDeps, facts: DisciplineFacts | undefined): KeeperReplayState {
  const settings = engineSettings(deps);
  const model = modelOf(request.info);
  const started = step(state.engine, { type: "flush-begin", settings, model, branchMessages: point.branch });
  const batches = effectOf(started, "summarize").capture.batches;
  // The live flush sees the requests sent so far: the horizon of the recorded times before this request.
  const costModel = request.info.costModel;
  const requestFacts = { requestTimes: state.engine.ledger.requestTimes, ttlMs: ttlMsOf(request.info), horizonCap: deps.config.summarizer.horizonCap, ...(costModel ? { costModel } : {}) };
  const routes = summaryRoutes({ settings, batches, requestFacts });
  const results = batches.map((b, i) => (routes[i] ? deps.summarize(b) : { summary: summarizeExtractively(b), billed: 0 }));
  const planned = step(started.state, {
    type: "flush-plan",
    settings,
    model,
    branchMessages: point.branch,
    summaries: results.map((r) => r.summary),
    now: request.info.timestamp,
    facts: deps.discipline ? facts : undefined,
    label: `request ${request.requestIndex} (${point.reason})`,
  });
  // No recall in the replay: no spill files to write, nothing fails.
  const { result } = effectOf(planned, "write-spills");
  const done = step(planned.state, { type: "flush-written", result, failed: [], contextTokens: undefined });
  const billed = results.reduce((n, r) => n + r.billed, 0);
  const sent = routes.filter(Boolean).length;
  const s = state.summarizer;
  return {
    ...state,
    engine: done.state,
    flushedThrough: Math.max(state.flushedThrough, newestTimestamp(point.branch)),
    flushes: [
      ...state.flushes,
      { requestIndex: request.requestIndex, reason: point.reason, batches: batches.length, modelBatches: sent, rewrote: result.rewrote, summarizerBilled: billed },
    ],
    summarizer: {
      calls: s.calls + sent,
      inputTokens: s.inputTokens + results.reduce((n, r) => n + r.summary.inputTokens, 0),
      outputTokens: s.outputTokens + results.reduce((n, r) => n + r.summary.outputTokens, 0),
      billed: s.billed + billed,
    },
  };
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
  const point = flushPointOf(request.messages, state, budgetCheckFor(settings, window));
  const facts = deps.discipline ? replayCacheFacts(state, request, window) : undefined;
  let next = point ? flush(state, point, request, deps, facts) : state;
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
    previousContextTokens: deps.discipline ? tokensAddedSince(rendered, Number.NEGATIVE_INFINITY) : 0,
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
  const out = step(state.engine, { type: "before-request", payload: body, key: keyOf(state, info), settings, model: { api: info.api, id: info.model } });
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
