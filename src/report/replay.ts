/**
 * Replay of a recorded Pi session through the cache analyzer ("bare arm"): rebuild the
 * context Pi sent before every recorded assistant message with Pi's own session rules,
 * serialize it with pi-ai's Anthropic payload rules (the provider-neutral shape the analyzer
 * hashes and counts, whatever the request's API), feed the analyzer with the recorded
 * timestamps and each request's cache rule, cache key and prices (its model's `CostModel`,
 * cost-model.ts: explicit marks for Anthropic, automatic prefix caching for OpenAI and
 * Google; one cache per model), and calibrate the simulated read/write/uncached figures
 * against the usage the provider recorded.
 *
 * Token estimator: `calibrate: "per-session"` fits it to this session's recorded usage
 * (session-fit.ts) and also reports a cross-validated error (fit on the first half, scored on
 * the second); otherwise the fixed defaults fitted on the corpus (`scripts/fit-estimator.ts`)
 * with the unknown tools+system as a constant placeholder.
 * Thinking of closed cycles counts 0 tokens by default (`closedCycleThinking: "dropped"`).
 *
 * `transformContext(messages, requestIndex)` is the render-arm hook: it receives the
 * context (AgentMessages, as Pi's `context` event does) and returns what to serialize.
 */
import { readFileSync } from "node:fs";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { analyzeRun, createAnalyzerMemo, type AnalyzerOptions, type RequestAnalysis } from "../cache/analyzer.ts";
import { summarizeRun, type RunSummary } from "../cache/summary.ts";
import { createCharRatioEstimator, DEFAULT_ESTIMATOR_OPTIONS, type CharRatioEstimatorOptions } from "../cache/token-estimator.ts";
import type { FlatBytesMemo } from "../cache/flatten.ts";
import type { TimedRequest, WireRequestBody } from "../cache/wire-types.ts";
import type { ModelRef } from "../cache/cache-rules.ts";
import { ruleTtlMs } from "../cache/cache-rules.ts";
import { costModelFor, type CostModel } from "../cache/cost-model.ts";
import type { EstimatorFit } from "../cache/estimator-fit.ts";
import { serializeForAnthropic, type UnknownPrompt } from "./anthropic-wire.ts";
import { calibrate, findExternalInvalidations, findExternalInvalidationsAgainstReplay, type Calibration, type ExternalInvalidationOptions, type RecordedUsage } from "./calibration.ts";
import { crossValidatedCalibration, estimatorsOf, fitSessionEstimator, PER_SESSION_UNKNOWN_PROMPT, type SessionFit } from "./session-fit.ts";
import { recordedRequestPoints, toLlmMessages, type SessionRequestPoints } from "./pi-session-contexts.ts";
import { compactionAt } from "./recorded-events.ts";
import { costModelAsRecorded, modelKey, recordedCacheUse } from "./recorded-cache-use.ts";
import { parseSessionText, type ParsedSessionText, type SessionDiagnostic } from "./session-file.ts";

export interface UnknownPromptSize {
  /** Estimated tokens of the (unknown) tool definitions. */
  toolsTokens: number;
  /** Estimated tokens of the (unknown) system prompt. */
  systemTokens: number;
}

/**
 * Fitted on `corpus/large-session.jsonl` (Pi of November 2025, Sonnet 4.5; reproduced by
 * `scripts/fit-estimator.ts`): the constant term puts tools + system at 1565 tokens (the first request recorded 1687
 * prompt tokens with one short user message). The tools/system split is a guess; only the
 * sum matters because both always travel together.
 */
export const DEFAULT_UNKNOWN_PROMPT: UnknownPromptSize = { toolsTokens: 600, systemTokens: 965 };

/** What the render-arm hook learns about the request it transforms (from the recording). */
export interface ReplayRequestInfo {
  /** Recorded timestamp of the assistant message the request produced (ms). */
  timestamp: number;
  provider: string;
  api: string;
  /** Model id of the request. */
  model: string;
  /** Source line of the assistant entry. */
  line: number;
  /** Pi's thinking level for the request (the last `thinking_level_change` before it, or the session's default). */
  thinkingLevel: string;
  /** The request model's cache rule and prices (what the live host derives from `ctx.model`). */
  costModel: CostModel;
}

export interface ReplayOptions {
  file: string;
  /** File content; read from `file` when absent. */
  text?: string;
  /** The recording already read (`readRecording`), shared by the arms of one session; `text` is then not read. */
  recording?: ReadRecording;
  transformContext?: (messages: AgentMessage[], requestIndex: number, info: ReplayRequestInfo) => AgentMessage[];
  /**
   * The wire-arm hook: receives the serialized request body (after `transformContext` and
   * `serializeForAnthropic`) and returns what the analyzer sees, as `before_provider_request`
   * does live (the keeper arm places its seam mark here).
   */
  transformBody?: (body: WireRequestBody, requestIndex: number, info: ReplayRequestInfo) => WireRequestBody;
  /**
   * Also analyze the run with TTL expiry as the only invalidation, and cross-validate a
   * per-session fit (default true). When false, the `*TtlOnly` fields repeat the main analysis
   * and there is no cross-validated figure (saves analyzer passes per arm).
   */
  ttlOnlyAnalysis?: boolean;
  estimator?: Partial<CharRatioEstimatorOptions>;
  /** Fixed tokens per request beyond its blocks (from a per-session fit); default 0. */
  promptOverheadTokens?: number;
  unknownPrompt?: UnknownPromptSize;
  /**
   * "per-session": fit the estimator to this recording's usage (ignores `estimator`,
   * `promptOverheadTokens` and `unknownPrompt`) and cross-validate it. Default: fixed constants.
   */
  calibrate?: "per-session" | "fixed";
  /** Replay with this per-session fit (another arm's) instead of fitting or the fixed constants. */
  reuseFit?: SessionFit;
  /** Each request's model → its cost model (the report looks prices up in pi-ai's registry); default: `costModelFor` without registry prices. */
  costModels?: (ref: ModelRef) => CostModel;
  cacheRetention?: "short" | "long";
  externalInvalidation?: Partial<ExternalInvalidationOptions>;
  /**
   * How external invalidations are found: "recorded-prompts" (default: a recording of bare Pi,
   * whose low reads within the TTL are all unexplained) or "replayed-reads" (a recording made
   * with this extension: a read far below what this replay could read). Ignored with
   * `externalInvalidations`.
   */
  invalidationsFrom?: "recorded-prompts" | "replayed-reads";
  /** These request indices as the external invalidations (another arm's), instead of finding them. */
  externalInvalidations?: readonly number[];
  /**
   * Block bytes by block object, shared by the arms of one session (speed only). The bodies
   * `transformBody` returns must not change blocks in place (the seam marks a copy).
   */
  blockBytes?: FlatBytesMemo;
  analyzer?: Partial<Omit<AnalyzerOptions, "estimator" | "invalidateBefore">>;
}

export interface WireRequest {
  index: number;
  entryId: string;
  /** Source line of the assistant entry. */
  line: number;
  timestamp: number;
  body: WireRequestBody;
  /** Number of context messages handed to serialization (after transformContext). */
  contextMessages: number;
  recorded: RecordedUsage & { output: number };
  stopReason: string;
  model: string;
  provider: string;
  api: string;
  /** The request model's cache rule and prices. */
  costModel: CostModel;
  thinkingLevel: string;
}

export interface ReplayResult {
  file: string;
  requests: WireRequest[];
  /** Analyzer output with the external invalidations replayed. */
  analysis: RequestAnalysis[];
  /** Analyzer output with TTL expiry (and the thinking switches the transcript shows) as the only invalidations. */
  analysisTtlOnly: RequestAnalysis[];
  summary: RunSummary;
  summaryTtlOnly: RunSummary;
  calibration: Calibration & { total_error_ttl_only: number; ttlOnly: Calibration };
  /** The per-session fit and its cross-validated calibration (`calibrate: "per-session"`). */
  fit?: SessionFit & { crossValidated: Calibration | undefined };
  /** The estimator constants the analysis used (the main model family's, with a per-session fit). */
  estimator: CharRatioEstimatorOptions & { promptOverheadTokens: number };
  externalInvalidations: number[];
  /** Requests that switch thinking on or off (`thinkingToggles`): the analyzer drops the cache before them. */
  thinkingChanges: number[];
  userPrompts: number;
  skipped: { unbilled: number };
  /** Where the recorded usage overrode a model's cache rule (`costModelAsRecorded`), one sentence each. */
  recordingNotes: Array<ModelRef & { note: string }>;
  diagnostics: SessionDiagnostic[];
}

/** A filler text that `createCharRatioEstimator(options)` counts as about `tokens`. */
function filler(chars: number): string {
  const unit = "placeholder ";
  return unit.repeat(Math.ceil(Math.max(0, chars) / unit.length)).slice(0, Math.max(0, Math.round(chars)));
}

export function unknownPromptText(size: UnknownPromptSize, est: CharRatioEstimatorOptions): UnknownPrompt {
  // The tool placeholder is estimated over its whole JSON definition (code ratio); subtract
  // the JSON framing of an empty-description placeholder tool (about 130 chars).
  const framing = JSON.stringify({ name: "unknown_tools_placeholder", description: "", input_schema: { type: "object", properties: {}, required: [] } }).length;
  return {
    toolsText: filler((size.toolsTokens - est.blockOverheadTokens) * est.codeCharsPerToken - framing),
    systemText: filler((size.systemTokens - est.blockOverheadTokens) * est.proseCharsPerToken),
  };
}

/**
 * Indices of requests that switch thinking on or off relative to the request before them.
 * The analyzer drops every cache entry there: Anthropic invalidates the messages cache when
 * thinking is enabled or disabled (tools and system would survive; the replay over-counts
 * their re-write, about 1.6k tokens per switch). A change of level with thinking on (a budget
 * change, e.g. "high" → "minimal") kept the whole cache in the recorded corpus (request 265
 * read 122,036 of 122,039 tokens), so it is not an invalidation here.
 */
export function thinkingToggles(requests: ReadonlyArray<{ thinkingLevel: string }>): number[] {
  const on = (level: string) => level !== "off";
  const out: number[] = [];
  for (let i = 1; i < requests.length; i++) if (on(requests[i].thinkingLevel) !== on(requests[i - 1].thinkingLevel)) out.push(i);
  return out;
}

const isZeroUsage = (u: RecordedUsage & { output: number }) => u.input + u.cacheRead + u.cacheWrite + u.output === 0;

/** `text` when given, else the file's contents; an unreadable file reads as empty, with a diagnostic. */
export function readSessionText(file: string, text: string | undefined): { text: string; diagnostics: SessionDiagnostic[] } {
  if (text !== undefined) return { text, diagnostics: [] };
  try {
    return { text: readFileSync(file, "utf8"), diagnostics: [] };
  } catch (error) {
    return { text: "", diagnostics: [{ file, line: 0, message: `cannot read file: ${(error as Error).message}` }] };
  }
}

/** A recording read once: its parse and the requests Pi's rules rebuild from it (shared by the arms of a session). */
export interface ReadRecording {
  parsed: ParsedSessionText;
  points: SessionRequestPoints;
  /** Read errors, bad lines and broken ancestry, in file order of discovery. */
  diagnostics: SessionDiagnostic[];
}

export function readRecording(file: string, text?: string): ReadRecording {
  const read = readSessionText(file, text);
  const parsed = parseSessionText(read.text, file);
  const points = recordedRequestPoints(parsed);
  return { parsed, points, diagnostics: [...read.diagnostics, ...parsed.diagnostics, ...points.diagnostics.map((d) => ({ file, ...d }))] };
}

export function replaySession(options: ReplayOptions): ReplayResult {
  // Arms replay the very same contexts: nothing here changes a recorded message (renders are pure).
  const recording = options.recording ?? readRecording(options.file, options.text);
  const diagnostics = [...recording.diagnostics];
  const { points, userMessages } = recording.points;

  const perSession = options.calibrate === "per-session" || options.reuseFit !== undefined;
  const fixedEst: CharRatioEstimatorOptions = { ...DEFAULT_ESTIMATOR_OPTIONS, ...options.estimator };
  const unknownPrompt = unknownPromptText(perSession ? PER_SESSION_UNKNOWN_PROMPT : (options.unknownPrompt ?? DEFAULT_UNKNOWN_PROMPT), fixedEst);
  const costModels = options.costModels ?? ((ref: ModelRef) => costModelFor({ ref }));
  const recordedOf = (a: (typeof points)[number]["assistant"]) => {
    const u = a.usage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    return { input: u.input ?? 0, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0, output: u.output ?? 0 };
  };
  const cacheUse = recordedCacheUse(points.map((p) => ({ ref: { provider: p.assistant.provider, api: p.assistant.api, model: p.assistant.model }, recorded: recordedOf(p.assistant) })));
  const models = new Map<string, CostModel>();
  const recordingNotes: ReplayResult["recordingNotes"] = [];
  const costModelOf = (ref: ModelRef): CostModel => {
    const key = modelKey(ref);
    let m = models.get(key);
    if (!m) {
      const adjusted = costModelAsRecorded(costModels(ref), cacheUse.get(key));
      if (adjusted.note) recordingNotes.push({ ...ref, note: adjusted.note });
      models.set(key, (m = adjusted.costModel));
    }
    return m;
  };
  const skipped = { unbilled: 0 };
  const requests: WireRequest[] = [];
  // The recorded compaction each replayed request's context starts from (a new one explains a cold cache).
  const compactions: Array<number | undefined> = [];
  for (const point of points) {
    const a = point.assistant;
    const recorded = recordedOf(a);
    if (isZeroUsage(recorded)) {
      // Aborted before the provider answered: nothing was billed, treat as never sent.
      skipped.unbilled++;
      continue;
    }
    const index = requests.length;
    let context = point.context;
    const compactedAt = compactionAt(context);
    const costModel = costModelOf({ provider: a.provider, api: a.api, model: a.model });
    const info: ReplayRequestInfo = { timestamp: a.timestamp, provider: a.provider, api: a.api, model: a.model, line: point.line, thinkingLevel: point.thinkingLevel, costModel };
    try {
      if (options.transformContext) context = options.transformContext(context, index, info);
      let body = serializeForAnthropic(toLlmMessages(context), {
        model: { provider: a.provider, api: a.api, id: a.model },
        cacheRetention: options.cacheRetention ?? "short",
        unknownPrompt,
      });
      if (options.transformBody) body = options.transformBody(body, index, info);
      if (body.messages[body.messages.length - 1]?.role === "assistant") {
        diagnostics.push({
          file: options.file,
          line: point.line,
          message: "rebuilt context ends with an assistant message (recorded out of order?); its prompt carries no message mark",
        });
      }
      requests.push({
        index,
        entryId: point.entryId,
        line: point.line,
        timestamp: a.timestamp,
        body,
        contextMessages: context.length,
        recorded,
        stopReason: a.stopReason,
        model: a.model,
        provider: a.provider,
        api: a.api,
        costModel,
        thinkingLevel: point.thinkingLevel,
      });
      compactions.push(compactedAt);
    } catch (error) {
      diagnostics.push({ file: options.file, line: point.line, message: `cannot rebuild this request: ${(error as Error).message}; skipped` });
    }
  }

  const long = options.cacheRetention === "long";
  const ttlOf = (r: WireRequest) => ruleTtlMs(r.costModel.rule, long);
  const recordedTimes = requests.map((r) => ({ timestamp: r.timestamp, recorded: r.recorded, ttlMs: ttlOf(r), cacheKey: cacheKeyOf(r) }));
  const invalidationOptions = { ttlMs: long ? 60 * 60 * 1000 : 5 * 60 * 1000, ...options.externalInvalidation };
  const fromReplay = options.externalInvalidations === undefined && options.invalidationsFrom === "replayed-reads";
  const thinkingChanges = thinkingToggles(requests);
  const timed: TimedRequest[] = requests.map((r) => ({
    body: r.body,
    timestamp: r.timestamp,
    outputTokens: r.recorded.output,
    cacheRule: { ...r.costModel.rule, ttlMs: ttlOf(r) },
    cacheKey: cacheKeyOf(r),
    pricing: r.costModel.pricing,
  }));
  const closedCycleThinking = options.analyzer?.closedCycleThinking ?? "dropped";
  const families = requests.map((r) => r.costModel.rule.family);
  // The serializer shares block objects between bodies and nothing mutates them: each block's bytes are computed once.
  const bytes: FlatBytesMemo = options.blockBytes ?? new WeakMap();
  const fit = options.reuseFit ?? (perSession ? fitSessionEstimator(requests.map((r, i) => ({ body: r.body, recorded: r.recorded, family: families[i] })), { closedCycleThinking, bytes }) : undefined);
  const est = fit ? fit.all.estimator : fixedEst;
  const overhead = fit ? fit.all.promptOverheadTokens : (options.promptOverheadTokens ?? 0);
  if (fit) {
    // Each request with its model family's fit.
    const perRequest = estimatorsOf(fit, families, "all");
    timed.forEach((t, i) => Object.assign(t, perRequest[i]));
  }
  const analyzerOptions: Partial<AnalyzerOptions> = {
    closedCycleThinking,
    ...options.analyzer,
    estimator: createCharRatioEstimator(est),
    promptOverheadTokens: overhead,
    memo: createAnalyzerMemo({ bytes }),
  };
  // "TTL only": no external invalidation, but a thinking change still loses the cache (it is in the transcript).
  const ttlOnlyFirst = fromReplay ? analyzeRun(timed, { ...analyzerOptions, invalidateBefore: new Set(thinkingChanges) }) : undefined;
  // A request right after a recorded compaction read little because Pi compacted: not an external loss.
  const afterCompaction = (i: number) => i > 0 && compactions[i] !== undefined && compactions[i] !== compactions[i - 1];
  const externalInvalidations = options.externalInvalidations
    ? [...options.externalInvalidations]
    : ttlOnlyFirst
      ? findExternalInvalidationsAgainstReplay(recordedTimes, ttlOnlyFirst, invalidationOptions)
      : findExternalInvalidations(recordedTimes, invalidationOptions).filter((i) => !afterCompaction(i));
  const invalidateBefore = new Set([...externalInvalidations, ...thinkingChanges]);
  const analysis = analyzeRun(timed, { ...analyzerOptions, invalidateBefore });
  const analysisTtlOnly = ttlOnlyFirst ?? (options.ttlOnlyAnalysis === false ? analysis : analyzeRun(timed, { ...analyzerOptions, invalidateBefore: new Set(thinkingChanges) }));
  const recorded = requests.map((r) => r.recorded);
  const withInvalidations = calibrate(analysis, recorded);
  const ttlOnly = calibrate(analysisTtlOnly, recorded);
  const crossValidated =
    fit && !options.reuseFit && options.ttlOnlyAnalysis !== false ? crossValidatedCalibration({ fit, timed, families, recorded, analyzer: { ...analyzerOptions, invalidateBefore } }) : undefined;
  return {
    file: options.file,
    requests,
    analysis,
    analysisTtlOnly,
    summary: summarizeRun(analysis, { userPrompts: userMessages }),
    summaryTtlOnly: summarizeRun(analysisTtlOnly, { userPrompts: userMessages }),
    calibration: { ...withInvalidations, total_error_ttl_only: ttlOnly.total_error, ttlOnly },
    ...(fit ? { fit: { ...fit, crossValidated } } : {}),
    estimator: { ...est, promptOverheadTokens: overhead },
    externalInvalidations,
    thinkingChanges,
    userPrompts: userMessages,
    skipped,
    recordingNotes,
    diagnostics,
  };
}

/** Providers keep one cache per model. */
export function cacheKeyOf(r: { provider: string; model: string }): string {
  return `${r.provider}/${r.model}`;
}

export type { EstimatorFit };
