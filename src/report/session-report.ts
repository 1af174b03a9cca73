/**
 * One session, every arm: replay the recording once per arm (`replaySession` with the arm's
 * `transformContext` and `transformBody`), then reduce each run to the report figures and per-request series.
 *
 * Figures (costs in billed-equivalent units: one uncached input token of each request's model,
 * at that model's price ratios from its cost model — Anthropic: write 1.25× (5 min) / 2× (1 h),
 * read 0.1×; OpenAI and Google: no write premium, read at the model's cache-read price):
 * - billed_input: Σ uncached + write(5m) × w5 + write(1h) × w1h + read × r of the requests;
 * - summarizer_cost: the arm's summarizer calls under the replay's summary model;
 * - compaction_cost: the summary requests of Pi's compactions the arm made (pi-compaction.ts);
 * - billed_with_output: billed_input + summarizer_cost + compaction_cost + recorded output tokens × output ratio;
 * - usd_*: the same in dollars at the models' prices (pi-ai's registry, else the fallback
 *   table), each request at its own model's rates and price tier; the summarizer at the
 *   session model's rates;
 * - ratio_to_bare: (billed_input + summarizer_cost + compaction_cost) / bare's (billed_input + compaction_cost);
 * - hit_ratio: read / (read + write + uncached); busts: requests that failed to read the
 *   previous request's live cached prefix; busts_per_prompt: busts / user prompts;
 * - peak / final context tokens: the largest / last estimated prompt size.
 * Calibration (simulated vs recorded usage) is the bare arm's: only it replays what was sent.
 */
import { createAnalyzerMemo, requestPromptTokens, type AnalyzerMemo } from "../cache/analyzer.ts";
import type { ModelRef } from "../cache/cache-rules.ts";
import { createCharRatioEstimator, type TokenEstimator } from "../cache/token-estimator.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { costModelFor, type CostModel } from "../cache/cost-model.ts";
import type { FlatBytesMemo } from "../cache/flatten.ts";
import { emptyReasoningDropTally, tallyReasoningDrop } from "../cache/reasoning-drops.ts";
import type { Arm, ArmRunTotals, ArmStartOptions } from "./arms.ts";
import { armReport, mainRef, seriesOf } from "./arm-report.ts";
import { DEFAULT_CONTEXT_WINDOW, type KeeperRequestInfo } from "./keeper-engine.ts";
import type { PiCompactionSettings } from "./pi-compaction.ts";
import { withPiCompaction } from "./pi-compaction-arm.ts";
import { piReplayPrimitives } from "./pi-session-contexts.ts";
import { recordedKeeperRun } from "./recorded-keeper.ts";
import { keeperRecordingOf } from "./recorded-with.ts";
import { readRecording, replaySession, type ReplayOptions, type ReplayResult } from "./replay.ts";
import type { ReplaySummarySource } from "./replay-summaries.ts";
import type { SessionDiagnostic } from "./session-file.ts";
import { calibrationOf, modelsOf, recordedRequestDollars, requestDollars } from "./session-figures.ts";
import { estimatorsOf } from "./session-fit.ts";
import { oldVersionDiagnostic, sessionModel } from "./session-model.ts";

export interface ArmReport {
  name: string;
  description: string;
  requests: number;
  billed_input: number;
  summarizer_cost: number;
  billed_with_output: number;
  ratio_to_bare: number;
  ratio_to_bare_with_output: number;
  hit_ratio: number;
  busts: number;
  busts_per_prompt: number;
  peak_context_tokens: number;
  final_context_tokens: number;
  read: number;
  write: number;
  uncached: number;
  output: number;
  flushes: number;
  /** Flushes that changed rendered history. */
  rewriting_flushes: number;
  budget_flushes: number;
  /** Flushes the in-loop trigger started (inside a tool loop, when it paid). */
  loop_flushes: number;
  summarizer_calls: number;
  /** Pi's compactions the arm paid the summary requests of: simulated where its own context passed Pi's threshold, or the recording's (pi-compaction.ts). */
  compactions: number;
  /** Their summary requests in billed-equivalent units (uncached input, the summary at the output ratio). */
  compaction_cost: number;
  /** Dollars: input (cache-aware), summarizer, Pi's compaction requests, and input + summarizer + compaction + output. */
  usd_input: number;
  usd_summarizer: number;
  usd_compaction: number;
  usd_total: number;
}

export interface ArmSeries {
  contextTokens: number[];
  read: number[];
  write: number[];
}

export interface SessionReport {
  file: string;
  requests: number;
  user_prompts: number;
  model: string;
  /** How closed-cycle thinking was counted (from the model's thinking policy row). */
  closed_cycle_thinking: "dropped" | "billed";
  calibration: SessionCalibration;
  external_invalidations: number;
  /** Each model of the session with its cache rule and prices. */
  models: SessionModelInfo[];
  /** Which arm replays what was sent (the other is the counterfactual), from the keeper's entries in the file. */
  recorded_with: "keeper" | "bare";
  money: SessionMoney;
  skipped: { unbilled: number };
  diagnostics: SessionDiagnostic[];
  arms: Record<string, ArmReport>;
  /**
   * Reasoning the provider dropped from the recorded requests, from Pi's diagnostics on the
   * assistant messages (reasoning-drops.ts: managed-effort Claude models, GPT-6.2+); absent when
   * none was reported. What was paid only: the arms' replays do not simulate it.
   */
  reasoning_dropped?: { requests: number; blocks: number; reasons: string[] };
}

/**
 * Dollars at the models' prices. `paid_usd`: the recorded usage (plus, on a keeper recording,
 * the summarizer dollars its entries recorded) — what the session cost. `bare_usd` and
 * `keeper_usd`: the bare and keeper arms' replays (`usd_total`); the one of the arm the session
 * was recorded with is the replay of what was paid (calibrated against it), the other one the
 * counterfactual ("without the keeper ≈", "with the keeper ≈").
 */
export interface SessionMoney {
  paid_usd: number;
  bare_usd: number;
  keeper_usd: number | null;
  /** The recorded arm's replay of `paid_usd`. */
  replayed_paid_usd: number;
  /** Counterfactual minus paid (keeper recording: what the keeper saved; bare: what it would have saved); null without a keeper arm. */
  saved_usd: number | null;
}

export interface SessionCalibration {
  /** The arm whose replay was compared with the recorded usage: the one the session was recorded with. */
  arm: "keeper" | "bare";
  total_error: number;
  prompt_size_error: number;
  total_error_ttl_only: number;
  /** Per-session fit: total error on the second half of the requests with the estimator fitted on the first half (null without a fit or a second half). */
  total_error_cross_validated: number | null;
  estimator: {
    /** "per-session" when fitted to this recording, "fixed" for the corpus constants. */
    source: "per-session" | "fixed";
    /** Why the fit was refused (then the fixed constants were used), or how it was simplified. */
    note?: string;
    prose_chars_per_token: number;
    code_chars_per_token: number;
    block_overhead_tokens: number;
    prompt_overhead_tokens: number;
  };
}

export interface SessionModelInfo {
  provider: string;
  api: string;
  model: string;
  requests: number;
  cache_rule: string;
  /** Dollars per million tokens (base tier). */
  prices: { input: number; output: number; cache_read: number; cache_write: number };
  price_source: string;
  /** Calibration error over this model's requests alone (in-sample). */
  total_error: number;
  /** The estimator this model's requests were replayed with: its family's own fit, or the session's when the family is small. */
  estimator: "family fit" | "session fit" | "fixed";
  /** The recording overrode the model's cache rule (no cache writes, or no cache use at all). */
  note?: string;
}

export interface SessionRun {
  report: SessionReport;
  series: Record<string, ArmSeries>;
  /**
   * Per replayed request (the same requests in every arm): its recorded time, the dollars its
   * recorded usage cost, and each arm's dollars for it (input and output, summarizer aside),
   * so a caller can sum a time window (`report --all --since`).
   */
  requests: { timestamps: number[]; paid: number[]; arms: Record<string, number[]> };
}

export interface ArmProgress {
  arm: string;
  armIndex: number;
  armCount: number;
  /** Requests rebuilt so far in this arm, and the expected total (an upper bound before the first arm ends). */
  request: number;
  requests: number;
  /** True once the arm (rebuild and analysis) is finished. */
  armDone: boolean;
}

export interface ReportSessionOptions {
  file: string;
  /** File content; read from `file` when absent. */
  text?: string;
  arms: readonly Arm[];
  summaries: ReplaySummarySource;
  contextWindow?: ArmStartOptions["contextWindow"];
  /** Pi's compaction settings for a model (the arms it is simulated in); default Pi's defaults. */
  piCompaction?: (ref: { provider: string; model: string }) => PiCompactionSettings;
  /** A request's model → its cost model (the CLI looks prices up in pi-ai's registry); default: fallback prices. */
  costModels?: (ref: ModelRef) => CostModel;
  /** Estimator: fitted to each session's own usage (default) or the fixed corpus constants. */
  calibrate?: "per-session" | "fixed";
  /**
   * "full" (default) also calibrates with TTL expiry as the only invalidation and cross-validates
   * the fit (two more analyzer passes); "totals" (`report --all`) leaves both out (their fields
   * then repeat the in-sample figure, and `total_error_cross_validated` is null) and the tool
   * pairing check of every request.
   */
  detail?: "full" | "totals";
  onProgress?: (p: ArmProgress) => void;
}

/**
 * Every arm over one recording. The arm the session was recorded with (the keeper when its
 * entries are in the file, else bare) runs first: its requests are what was sent, so it fits
 * the estimator to the recorded usage, is calibrated against it and finds the external cache
 * invalidations; every other arm replays with its fit and its invalidations.
 */
export function reportSession(options: ReportSessionOptions): SessionRun {
  // Read once: every arm replays the same rebuilt contexts.
  const recorded = readRecording(options.file, options.text);
  const parsed = recorded.parsed;
  const versionNote = oldVersionDiagnostic(parsed.entries, parsed.lineOf, options.file);
  const recording = keeperRecordingOf(parsed.entries);
  const { model, provider, api, closedCycleThinking, assistants } = sessionModel(parsed.entries);
  const costModels = options.costModels ?? ((ref: ModelRef) => costModelFor({ ref }));
  // The size model bills the summarizer as the session model: its output price ratio.
  const outputPrice = model ? costModels({ provider, api, model }).pricing.output : undefined;
  const perSession = (options.calibrate ?? "per-session") === "per-session";
  const recordedArm = recording.recordedWith === "keeper" && options.arms.some((a) => a.name === "keeper") ? "keeper" : "bare";
  const order = [...options.arms.filter((a) => a.name === recordedArm), ...options.arms.filter((a) => a.name !== recordedArm)];
  const runs = new Map<string, { result: ReplayResult; totals: ArmRunTotals }>();
  let first: ReplayResult | undefined;
  let expected = assistants;
  const seen = new Set<string>();
  const armDiagnostics: SessionDiagnostic[] = [];
  const blockBytes: FlatBytesMemo = new WeakMap();
  const promptMemo = createAnalyzerMemo({ bytes: blockBytes });
  order.forEach((arm, armIndex) => {
    // A keeper recording's keeper arm is what it sent, rebuilt from its entries; every other arm is simulated.
    const started =
      recordedArm === "keeper" && arm.name === "keeper"
        ? recordedKeeperRun(recorded, { summarizerUsd: recording.summarizerUsd, unappliedCompactionUsd: recording.unappliedCompaction.cost, ...(outputPrice !== undefined ? { outputPrice } : {}) })
        : arm.start({ summaries: options.summaries, ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}), ...(outputPrice !== undefined ? { outputPrice } : {}) });
    // The arm the session was recorded with compacted where the recording shows (it runs first); every other one where its own context passes Pi's threshold.
    const run = withPiCompaction(started, {
      recording: recorded,
      simulate: first !== undefined,
      prims: piReplayPrimitives,
      contextWindow: options.contextWindow ?? (() => DEFAULT_CONTEXT_WINDOW),
      ...(options.piCompaction ? { settings: options.piCompaction } : {}),
      ...(first ? { promptTokens: promptTokensWith(first, closedCycleThinking, promptMemo) } : {}),
    });
    const progress = (request: number, armDone: boolean) =>
      options.onProgress?.({ arm: arm.name, armIndex, armCount: order.length, request, requests: Math.max(expected, request), armDone });
    const shared: Partial<ReplayOptions> = !first
      ? { calibrate: perSession ? "per-session" : "fixed", invalidationsFrom: recordedArm === "keeper" ? "replayed-reads" : "recorded-prompts" }
      : {
          externalInvalidations: first.externalInvalidations,
          ...(first.fit ? { reuseFit: first.fit } : { estimator: first.estimator, promptOverheadTokens: first.estimator.promptOverheadTokens }),
        };
    const result = replaySession({
      file: options.file,
      recording: recorded,
      ttlOnlyAnalysis: armIndex === 0 && options.detail !== "totals",
      analyzer: { closedCycleThinking, ...(options.detail === "totals" ? { pairing: false } : {}) },
      costModels,
      blockBytes,
      ...shared,
      transformContext: (messages, index, info) => {
        progress(index + 1, false);
        return run.transformContext ? run.transformContext(messages, index, info) : messages;
      },
      ...(run.transformBody ? { transformBody: run.transformBody } : {}),
    });
    if (armIndex === 0) {
      first = result;
      expected = result.requests.length;
    }
    for (const d of result.diagnostics) {
      const key = `${d.line}\u0000${d.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      armDiagnostics.push(armIndex === 0 ? d : { ...d, message: `${d.message} (arm ${arm.name})` });
    }
    runs.set(arm.name, { result, totals: run.totals() });
    progress(result.requests.length, true);
  });
  const bare = runs.get("bare")?.result;
  const reports: Record<string, ArmReport> = {};
  const series: Record<string, ArmSeries> = {};
  const perRequest: SessionRun["requests"] = { timestamps: first?.requests.map((q) => q.timestamp) ?? [], paid: first ? recordedRequestDollars(first) : [], arms: {} };
  // What was paid includes the summary requests of the compactions Pi recorded (their usage is on the compaction entry).
  for (const c of runs.get(recordedArm)?.totals.compactions?.byRequest ?? []) if (c.requestIndex < perRequest.paid.length) perRequest.paid[c.requestIndex]! += c.usd;
  const bareCompactions = runs.get("bare")?.totals.compactions?.billed ?? 0;
  for (const arm of options.arms) {
    const { result, totals } = runs.get(arm.name)!;
    // A compaction's summary requests count with the request they came before.
    const dollarsByRequest = requestDollars(result);
    for (const c of totals.compactions?.byRequest ?? []) if (c.requestIndex < dollarsByRequest.length) dollarsByRequest[c.requestIndex]! += c.usd;
    perRequest.arms[arm.name] = dollarsByRequest;
    const main: CostModel = costModels(mainRef(result, model));
    reports[arm.name] = armReport({ arm, r: result, totals, bare, bareCompactions, main });
    series[arm.name] = seriesOf(result.analysis);
  }
  const diagnostics = [...(versionNote ? [versionNote] : []), ...(first ? armDiagnostics : recorded.diagnostics)];
  // What the provider dropped, from Pi's diagnostics; decided anew at a request whose earlier
  // history changed (where the replay of what was sent diverges from the request before).
  const rewritten = new Set(first ? first.requests.filter((q, i) => first!.analysis[i]?.divergence !== undefined).map((q) => q.entryId) : []);
  const drops = recorded.points.points.reduce((t, p) => tallyReasoningDrop(t, p.assistant, { rewritten: rewritten.has(p.entryId) }), emptyReasoningDropTally());
  // A keeper recording: also its summarizer's calls and the background compaction summaries it never applied (their entries).
  const paid = perRequest.paid.reduce((n, x) => n + x, 0) + (recordedArm === "keeper" ? recording.summarizerUsd + recording.unappliedCompaction.cost : 0);
  const bareUsd = reports.bare?.usd_total ?? 0;
  const keeperUsd = reports.keeper?.usd_total ?? null;
  const counterfactual = recordedArm === "keeper" ? bareUsd : keeperUsd;
  return {
    report: {
      file: options.file,
      requests: first?.requests.length ?? 0,
      user_prompts: first?.userPrompts ?? 0,
      model,
      closed_cycle_thinking: closedCycleThinking,
      recorded_with: recordedArm,
      calibration: calibrationOf(first, recordedArm),
      external_invalidations: first?.externalInvalidations.length ?? 0,
      models: first ? modelsOf(first) : [],
      money: {
        paid_usd: paid,
        bare_usd: bareUsd,
        keeper_usd: keeperUsd,
        replayed_paid_usd: reports[recordedArm]?.usd_total ?? 0,
        saved_usd: counterfactual === null ? null : recordedArm === "keeper" ? counterfactual - paid : paid - counterfactual,
      },
      skipped: first?.skipped ?? { unbilled: 0 },
      diagnostics,
      arms: reports,
      ...(drops.requests > 0 ? { reasoning_dropped: { requests: drops.requests, blocks: drops.blocksLost, reasons: drops.reasons } } : {}),
    },
    series,
    requests: perRequest,
  };
}

/** The prompt tokens of a request body under the estimator `calibrated` was replayed with (its model family's fit). */
function promptTokensWith(calibrated: ReplayResult, closedCycleThinking: "dropped" | "billed", memo: AnalyzerMemo): (body: WireRequestBody, info: KeeperRequestInfo) => number {
  const byFamily = new Map<string, { estimator: TokenEstimator; promptOverheadTokens: number }>();
  const fixed = { estimator: createCharRatioEstimator(calibrated.estimator), promptOverheadTokens: calibrated.estimator.promptOverheadTokens };
  return (body, info) => {
    const family = info.costModel?.rule.family ?? "";
    let est = byFamily.get(family);
    if (!est) byFamily.set(family, (est = calibrated.fit ? estimatorsOf(calibrated.fit, [family], "all")[0]! : fixed));
    return requestPromptTokens({ body, timestamp: info.timestamp, ...est }, { closedCycleThinking, memo });
  };
}
