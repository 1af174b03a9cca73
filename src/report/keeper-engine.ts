/**
 * The keeper arm of a replay: the extension's real pure pipeline driven request by request
 * over the contexts Pi rebuilt from the recording.
 *
 * Flush points (where the live extension flushes):
 * - request end: the previous user request finished (its final assistant message came, then
 *   a new user prompt). The flush sees the branch up to, not including, the new prompt;
 * - budget trigger: inside a tool loop (the context ends with a tool result), when
 *   `src/flush/budget-trigger.ts` fires for the raw branch's tokens (characters / 4, Pi's own
 *   estimate) and those older than the last flush. The flush sees the whole context.
 * A flush captures the finished batches (`captureBatches`), summarizes them as the live
 * extension would (`summarizer.mode`; under `auto`, `chooseSummarySource` with the request
 * horizon of the recorded request times decides per batch: the injected deterministic
 * stand-in for a model summary, or the real extractive summarizer), and plans the new state (`planFlush`, with the
 * thinking boundary when the thinking policy strips for the request's model).
 * Every request then renders with `renderContext` (stub-replace, error-purge,
 * chain-compress, thinking strip, pairing sweep) over the persisted state.
 *
 * With cache discipline and `cache.seam` on, every serialized request then gets the seam mark
 * at the end of the frozen history, placed by the live shell's own function
 * (`placeSeamAtFrozenBoundary`, lazy move included); whether the last request carried it is
 * the `seamActive` fact of the next flush. A cold cache is detected as live
 * (`detectColdCache`): TTL expiry, a model switch or a thinking-level change.
 *
 * Pure: `stepKeeperReplay` is a reducer `(state, request) => {state, rendered}` and
 * `stepKeeperSeam` one `(state, body) => {state, body}`; the engine object only holds the
 * latest state for the replay hooks.
 */
import { TTL_5M_MS } from "../cache/pricing.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import type { PreviousSeam } from "../discipline/seam-placement.ts";
import { estimateRequestHorizon } from "../discipline/request-horizon.ts";
import type { GateLogEntry } from "../discipline/schema.ts";
import { budgetTriggerFiresFor } from "../flush/budget-trigger.ts";
import type { BoundaryHook } from "../flush/plan.ts";
import { planDisciplinedFlush, type CacheSettings, type DisciplineFacts } from "../keeper/discipline.ts";
import type { PruneConfig } from "../prune/config.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import { type ContextMessage, isAssistant, isToolResult, isUser, timestampOf } from "../session/messages.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import { messageChars } from "../discipline/history-view.ts";
import { captureForFlush, planKeeperFlush } from "../keeper/flush.ts";
import { keeperRender } from "../keeper/render.ts";
import type { KeeperReplayConfig } from "./keeper-config.ts";
import { replayCacheFacts, stepKeeperSeam } from "./keeper-cache-edge.ts";
import { replaySummaryOf, type ReplaySummarizer } from "./replay-summaries.ts";

/** What the replay knows about a request (model and recorded time). */
export interface KeeperRequestInfo {
  timestamp: number;
  provider: string;
  api: string;
  model: string;
  /** Pi's thinking level for the request (a change loses the cache). Absent: unknown, never a change. */
  thinkingLevel?: string;
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
  keeper: KeeperState;
  /** Timestamp of the newest message the last flush saw (−∞ before the first flush). */
  flushedThrough: number;
  flushes: ReplayFlush[];
  summarizer: SummarizerTotals;
  /** Recorded times of the requests replayed so far (cache discipline's request horizon). */
  requestTimes: number[];
  /** Model of the previous request (a switch loses the cache). */
  previousModel?: string;
  /** Thinking level of the previous request (a change loses the cache). */
  previousThinkingLevel?: string;
  /** The keeper's render of the latest request (where its seam goes). */
  rendered: ContextMessage[];
  /** The seam the latest serialized request carried (for its lazy move), and whether it carried one. */
  seam: { previous?: PreviousSeam; placed: boolean };
  /** Estimated tokens of the previous request's rendered context (context pressure). */
  previousContextTokens: number;
  /** Cache discipline held mutations back at the last flush: a cold cache re-plans. */
  pending: boolean;
  /** Gate decisions so far (cache discipline). */
  gateLog: GateLogEntry[];
}

export function initialKeeperReplayState(): KeeperReplayState {
  return {
    keeper: emptyState(),
    flushedThrough: Number.NEGATIVE_INFINITY,
    flushes: [],
    summarizer: { calls: 0, inputTokens: 0, outputTokens: 0, billed: 0 },
    requestTimes: [],
    previousContextTokens: 0,
    rendered: [],
    seam: { placed: false },
    pending: false,
    gateLog: [],
  };
}

export interface KeeperReplayDeps {
  config: KeeperReplayConfig;
  /** Stands in for the model summarizer: batches `summarizer.mode` sends to the model. */
  summarize: ReplaySummarizer;
  /** Context window of the request's model, for the budget trigger. Default 200k. */
  contextWindow?: (info: KeeperRequestInfo) => number;
  /** Seam for boundary hooks (profitability gate, quantized boundaries). None by default. */
  boundaryHooks?: readonly BoundaryHook[];
  /**
   * Cache discipline (quantized boundary, piggybacking, gate, cold-cache re-plans), priced
   * with the recorded timestamps; with `seam` on, `stepKeeperSeam` marks the frozen boundary
   * of every serialized request as the live shell does.
   */
  discipline?: CacheSettings;
}

export const DEFAULT_CONTEXT_WINDOW = 200_000;

export { replayCacheFacts, stepKeeperSeam };

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

/** The replay's budget check: `src/flush/budget-trigger.ts` on the replay's config and the request's window. */
export function budgetCheckFor(config: PruneConfig, contextWindow: number): BudgetCheck | undefined {
  if (!config.budgetTrigger.enabled) return undefined;
  return (contextTokens, tokensAtLastFlush) => budgetTriggerFiresFor({ trigger: config.budgetTrigger, contextTokens, tokensAtLastFlush, contextWindow });
}

export interface FlushPoint {
  reason: FlushReason;
  /** The branch as the live flush would see it. */
  branch: ContextMessage[];
}

const newestTimestamp = (messages: readonly ContextMessage[]) =>
  messages.reduce((t, m) => Math.max(t, timestampOf(m) ?? Number.NEGATIVE_INFINITY), Number.NEGATIVE_INFINITY);

/** Where (if at all) the live extension would have flushed before this request went out. */
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
  if (budget && last && isToolResult(last)) {
    // The raw branch stands in for Pi's usage estimate: its tokens now, and those older than the last flush.
    const contextTokens = tokensAddedSince(messages, Number.NEGATIVE_INFINITY);
    if (budget(contextTokens, contextTokens - tokensAddedSince(messages, state.flushedThrough))) return { reason: "budget", branch: messages };
  }
  return undefined;
}

function modelOf(info: KeeperRequestInfo): { provider: string; id: string; api: string } {
  return { provider: info.provider, id: info.model, api: info.api };
}

interface FlushContext {
  facts: DisciplineFacts | undefined;
  summarizeBatches: boolean;
}

function flush(state: KeeperReplayState, point: FlushPoint, request: KeeperReplayRequest, deps: KeeperReplayDeps, fc: FlushContext): KeeperReplayState {
  const settings = deps.config.settings;
  const model = modelOf(request.info);
  const keeper = dropStateOutsideContext(state.keeper, liveOccurrenceKeys(point.branch));
  const inputs = { state: keeper, branchMessages: point.branch, settings, model };
  const { batches } = fc.summarizeBatches ? captureForFlush(inputs) : { batches: [] };
  // The live flush sees the requests sent so far: the horizon of the recorded times before this request.
  const expectedRequests = estimateRequestHorizon({ requestTimes: state.requestTimes, ttlMs: TTL_5M_MS, cap: deps.config.summarizer.horizonCap }).expectedRequests;
  const results = batches.map((b) => replaySummaryOf(b, { mode: deps.config.summarizer.mode, expectedRequests, summarize: deps.summarize }));
  const sent = results.filter((r) => r.viaModel);
  const planWith = (hooks: readonly BoundaryHook[] | undefined) =>
    planKeeperFlush({ ...inputs, summaries: results.map((r) => r.summary), now: request.info.timestamp, ...(hooks ? { boundaryHooks: hooks } : {}) });
  let plan;
  let pending = state.pending;
  let gateLog = state.gateLog;
  if (deps.discipline && fc.facts) {
    const disciplined = planDisciplinedFlush({
      cache: deps.discipline,
      facts: fc.facts,
      now: request.info.timestamp,
      label: `request ${request.requestIndex} (${point.reason})`,
      plan: (hooks) => planWith([...(deps.boundaryHooks ?? []), ...hooks]),
      render: (messages, s) => renderForRequest(messages, s, deps.config, request.info),
    });
    plan = disciplined.plan;
    pending = disciplined.outcome.pending !== undefined;
    gateLog = [...gateLog, ...disciplined.outcome.log];
  } else plan = planWith(deps.boundaryHooks);
  const billed = results.reduce((n, r) => n + r.billed, 0);
  const s = state.summarizer;
  return {
    ...state,
    keeper: plan.nextState,
    pending,
    gateLog,
    flushedThrough: fc.summarizeBatches ? Math.max(state.flushedThrough, newestTimestamp(point.branch)) : state.flushedThrough,
    flushes: [
      ...state.flushes,
      {
        requestIndex: request.requestIndex,
        reason: point.reason,
        batches: batches.length,
        modelBatches: sent.length,
        rewrote: plan.nextState.stats.rewritesCaused > keeper.stats.rewritesCaused,
        summarizerBilled: billed,
      },
    ],
    summarizer: {
      calls: s.calls + sent.length,
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
  const window = (deps.contextWindow ?? (() => DEFAULT_CONTEXT_WINDOW))(request.info);
  const budget = budgetCheckFor(deps.config.prune, window);
  const point = flushPointOf(request.messages, state, budget);
  const facts = deps.discipline ? replayCacheFacts(state, request, window) : undefined;
  let next = state;
  if (point) next = flush(state, point, request, deps, { facts, summarizeBatches: true });
  else if (facts?.cold && state.pending) next = flush(state, { reason: "cold", branch: request.messages }, request, deps, { facts, summarizeBatches: false });
  const rendered = renderForRequest(request.messages, next.keeper, deps.config, request.info);
  next = {
    ...next,
    requestTimes: [...next.requestTimes, request.info.timestamp],
    previousModel: request.info.model,
    ...(request.info.thinkingLevel !== undefined ? { previousThinkingLevel: request.info.thinkingLevel } : {}),
    rendered,
    previousContextTokens: deps.discipline ? tokensAddedSince(rendered, Number.NEGATIVE_INFINITY) : 0,
  };
  return { state: next, rendered };
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
