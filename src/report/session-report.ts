/**
 * One session, every arm: replay the recording once per arm (`replaySession` with the arm's
 * `transformContext` and `transformBody`), then reduce each run to the report figures and per-request series.
 *
 * Figures (costs in billed-equivalent units: one uncached input token of each request's model,
 * at that model's price ratios from its cost model — Anthropic: write 1.25× (5 min) / 2× (1 h),
 * read 0.1×; OpenAI and Google: no write premium, read at the model's cache-read price):
 * - billed_input: Σ uncached + write(5m) × w5 + write(1h) × w1h + read × r of the requests;
 * - summarizer_cost: the arm's summarizer calls under the replay's summary model;
 * - billed_with_output: billed_input + summarizer_cost + recorded output tokens × output ratio;
 * - usd_*: the same in dollars at the models' prices (pi-ai's registry, else the fallback
 *   table), each request at its own model's rates and price tier; the summarizer at the
 *   session model's rates;
 * - ratio_to_bare: (billed_input + summarizer_cost) / bare's billed_input;
 * - hit_ratio: read / (read + write + uncached); busts: requests that failed to read the
 *   previous request's live cached prefix; busts_per_prompt: busts / user prompts;
 * - peak / final context tokens: the largest / last estimated prompt size.
 * Calibration (simulated vs recorded usage) is the bare arm's: only it replays what was sent.
 */
import type { RequestAnalysis } from "../cache/analyzer.ts";
import type { ModelRef } from "../cache/cache-rules.ts";
import { costModelFor, ratesAt, type CostModel } from "../cache/cost-model.ts";
import type { RunSummary } from "../cache/summary.ts";
import { findThinkingPolicyRow } from "../thinking/index.ts";
import type { Arm, ArmStartOptions } from "./arms.ts";
import { readSessionText, replaySession, type ReplayOptions, type ReplayResult } from "./replay.ts";
import type { ReplaySummarySource } from "./replay-summaries.ts";
import { parseSessionText, type SessionDiagnostic } from "./session-file.ts";
import { calibrationOf, dollars, inputCost, modelsOf, outputCost, recordedDollars } from "./session-figures.ts";

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
  summarizer_calls: number;
  /** Dollars: input (cache-aware), summarizer, and input + summarizer + output. */
  usd_input: number;
  usd_summarizer: number;
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
  /** "this session: $X; with the keeper: $Y" (bare and keeper arms' usd_total); recorded: the recorded usage at the same prices. */
  money: { session_usd: number; keeper_usd: number | null; recorded_usd: number };
  skipped: { unbilled: number };
  diagnostics: SessionDiagnostic[];
  arms: Record<string, ArmReport>;
}

export interface SessionCalibration {
  total_error: number;
  prompt_size_error: number;
  total_error_ttl_only: number;
  /** Per-session fit: total error on the second half of the requests with the estimator fitted on the first half (null without a fit or a second half). */
  total_error_cross_validated: number | null;
  estimator: {
    /** "per-session" when fitted to this recording, "fixed" for the corpus constants. */
    source: "per-session" | "fixed";
    /** Why the fit was refused (then the fixed constants were used). */
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
}

export interface SessionRun {
  report: SessionReport;
  series: Record<string, ArmSeries>;
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
  /** A request's model → its cost model (the CLI looks prices up in pi-ai's registry); default: fallback prices. */
  costModels?: (ref: ModelRef) => CostModel;
  /** Estimator: fitted to each session's own usage (default) or the fixed corpus constants. */
  calibrate?: "per-session" | "fixed";
  onProgress?: (p: ArmProgress) => void;
}

/**
 * The most used model of the recording and whether closed-cycle thinking costs nothing:
 * Anthropic by the model's thinking policy row; OpenAI and Google do not re-send earlier
 * turns' reasoning, so it is dropped there too.
 */
export function sessionModel(entries: ReadonlyArray<Record<string, unknown>>): { model: string; provider: string; api: string; closedCycleThinking: "dropped" | "billed"; assistants: number } {
  const counts = new Map<string, { n: number; provider: string; api: string }>();
  let assistants = 0;
  for (const e of entries) {
    const m = e.message as { role?: string; api?: string; provider?: string; model?: string } | undefined;
    if (e.type !== "message" || m?.role !== "assistant") continue;
    assistants++;
    if (!m.model) continue;
    const c = counts.get(m.model) ?? { n: 0, provider: m.provider ?? "", api: m.api ?? "" };
    c.n++;
    counts.set(m.model, c);
  }
  const top = [...counts.entries()].sort((a, b) => b[1].n - a[1].n)[0];
  if (!top) return { model: "", provider: "", api: "", closedCycleThinking: "dropped", assistants };
  const ref = { model: top[0], provider: top[1].provider, api: top[1].api };
  if (top[1].api !== "anthropic-messages") return { ...ref, closedCycleThinking: "dropped", assistants };
  const row = findThinkingPolicyRow({ provider: top[1].provider, modelId: top[0], api: top[1].api });
  return { ...ref, closedCycleThinking: row?.behaviour === "drops-closed-cycle" ? "dropped" : "billed", assistants };
}

/** Pi's current session format version (docs/session-format.md). */
export const CURRENT_SESSION_VERSION = 3;

/** A note when the header declares an older format (Pi migrates it; the replay does the same). */
export function oldVersionDiagnostic(entries: ReadonlyArray<Record<string, unknown>>, lineOf: readonly number[], file: string): SessionDiagnostic | undefined {
  const header = entries[0];
  if (!header || header.type !== "session") return undefined;
  const version = typeof header.version === "number" ? header.version : 1;
  if (version >= CURRENT_SESSION_VERSION) return undefined;
  return { file, line: lineOf[0], message: `session format version ${version} (current is ${CURRENT_SESSION_VERSION}): migrated with Pi's own rules before the replay` };
}

function seriesOf(analysis: readonly RequestAnalysis[]): ArmSeries {
  return { contextTokens: analysis.map((a) => a.totalTokens), read: analysis.map((a) => a.read), write: analysis.map((a) => a.write) };
}

interface ArmInputs {
  arm: Arm;
  r: ReplayResult;
  totals: ReturnType<ReturnType<Arm["start"]>["totals"]>;
  bare: ReplayResult | undefined;
  /** The session model, for the summarizer's dollars. */
  main: CostModel;
}

function armReport({ arm, r, totals, bare, main }: ArmInputs): ArmReport {
  const s = r.summary;
  const flushes = totals.flushes;
  const summarizer = totals.summarizer.billed;
  const billed = inputCost(r);
  const bareInput = bare ? inputCost(bare) : billed;
  const bareTotal = bare ? bareInput + outputCost(bare) : billed + outputCost(r);
  const withOutput = billed + summarizer + outputCost(r);
  const sizes = r.analysis.map((a) => a.totalTokens);
  const rates = ratesAt(main.prices.rates, 0);
  const usdSummarizer = (totals.summarizer.inputTokens * rates.input + totals.summarizer.outputTokens * rates.output) / 1e6;
  const usdInput = dollars(r, false);
  return {
    name: arm.name,
    description: arm.description,
    requests: s.requests,
    billed_input: billed,
    summarizer_cost: summarizer,
    billed_with_output: withOutput,
    ratio_to_bare: bareInput > 0 ? (billed + summarizer) / bareInput : 0,
    ratio_to_bare_with_output: bareTotal > 0 ? withOutput / bareTotal : 0,
    hit_ratio: s.hitRatio,
    busts: s.busts,
    busts_per_prompt: s.bustsPerUserPrompt,
    peak_context_tokens: sizes.length ? Math.max(...sizes) : 0,
    final_context_tokens: sizes.length ? sizes[sizes.length - 1] : 0,
    read: s.read,
    write: s.write,
    uncached: s.uncached,
    output: s.output,
    flushes: flushes.length,
    rewriting_flushes: flushes.filter((f) => f.rewrote).length,
    budget_flushes: flushes.filter((f) => f.reason === "budget").length,
    summarizer_calls: flushes.reduce((n, f) => n + f.modelBatches, 0),
    usd_input: usdInput,
    usd_summarizer: usdSummarizer,
    usd_total: usdInput + usdSummarizer + (dollars(r, true) - usdInput),
  };
}
/** The session model's reference (the most used model's first request). */
function mainRef(r: ReplayResult, model: string): ModelRef {
  const q = r.requests.find((x) => x.model === model) ?? r.requests[0];
  return q ? { provider: q.provider, api: q.api, model: q.model } : { provider: "", api: "", model };
}

export function reportSession(options: ReportSessionOptions): SessionRun {
  const { text, diagnostics: readErrors } = readSessionText(options.file, options.text);
  const parsed = parseSessionText(text, options.file);
  const versionNote = oldVersionDiagnostic(parsed.entries, parsed.lineOf, options.file);
  const { model, provider, api, closedCycleThinking, assistants } = sessionModel(parsed.entries);
  const costModels = options.costModels ?? ((ref: ModelRef) => costModelFor({ ref }));
  // The size model bills the summarizer as the session model: its output price ratio.
  const outputPrice = model ? costModels({ provider, api, model }).pricing.output : undefined;
  const perSession = (options.calibrate ?? "per-session") === "per-session";
  const arms = options.arms;
  const reports: Record<string, ArmReport> = {};
  const series: Record<string, ArmSeries> = {};
  let bare: ReplayResult | undefined;
  let expected = assistants;
  const seen = new Set<string>();
  const armDiagnostics: SessionDiagnostic[] = [];
  arms.forEach((arm, armIndex) => {
    const run = arm.start({ summaries: options.summaries, ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}), ...(outputPrice !== undefined ? { outputPrice } : {}) });
    const progress = (request: number, armDone: boolean) =>
      options.onProgress?.({ arm: arm.name, armIndex, armCount: arms.length, request, requests: Math.max(expected, request), armDone });
    // The bare arm fits the estimator (or not); every other arm replays with the bare arm's constants.
    const estimator: Partial<ReplayOptions> =
      armIndex === 0 || !bare
        ? { calibrate: perSession ? "per-session" : "fixed" }
        : bare.fit
          ? { reuseFit: bare.fit }
          : { estimator: bare.estimator, promptOverheadTokens: bare.estimator.promptOverheadTokens };
    const result = replaySession({
      file: options.file,
      text,
      ttlOnlyAnalysis: armIndex === 0,
      analyzer: { closedCycleThinking },
      costModels,
      ...estimator,
      transformContext: (messages, index, info) => {
        progress(index + 1, false);
        return run.transformContext ? run.transformContext(messages, index, info) : messages;
      },
      ...(run.transformBody ? { transformBody: run.transformBody } : {}),
    });
    if (armIndex === 0) {
      bare = result;
      expected = result.requests.length;
    }
    for (const d of result.diagnostics) {
      const key = `${d.line}\u0000${d.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      armDiagnostics.push(armIndex === 0 ? d : { ...d, message: `${d.message} (arm ${arm.name})` });
    }
    const totals = run.totals();
    const main = costModels(mainRef(result, model));
    reports[arm.name] = armReport({ arm, r: result, totals, bare, main });
    series[arm.name] = seriesOf(result.analysis);
    progress(result.requests.length, true);
  });
  const first = bare;
  const diagnostics = [...readErrors, ...(versionNote ? [versionNote] : []), ...(first ? armDiagnostics : parsed.diagnostics)];
  return {
    report: {
      file: options.file,
      requests: first?.requests.length ?? 0,
      user_prompts: first?.userPrompts ?? 0,
      model,
      closed_cycle_thinking: closedCycleThinking,
      calibration: calibrationOf(first),
      external_invalidations: first?.externalInvalidations.length ?? 0,
      models: first ? modelsOf(first) : [],
      money: {
        session_usd: reports.bare?.usd_total ?? 0,
        keeper_usd: reports.keeper?.usd_total ?? null,
        recorded_usd: first ? recordedDollars(first) : 0,
      },
      skipped: first?.skipped ?? { unbilled: 0 },
      diagnostics,
      arms: reports,
    },
    series,
  };
}
