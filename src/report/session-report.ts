/**
 * One session, every arm: replay the recording once per arm (`replaySession` with the arm's
 * `transformContext` and `transformBody`), then reduce each run to the report figures and per-request series.
 *
 * Figures (costs in billed-equivalent units: one uncached input token of the session model):
 * - billed_input: Σ uncached + 1.25 × write(5m) + 2 × write(1h) + 0.1 × read of the requests;
 * - summarizer_cost: the arm's summarizer calls under the replay's summary model;
 * - billed_with_output: billed_input + summarizer_cost + 5 × recorded output tokens;
 * - ratio_to_bare: (billed_input + summarizer_cost) / bare's billed_input;
 * - hit_ratio: read / (read + write + uncached); busts: requests that failed to read the
 *   previous request's live cached prefix; busts_per_prompt: busts / user prompts;
 * - peak / final context tokens: the largest / last estimated prompt size.
 * Calibration (simulated vs recorded usage) is the bare arm's: only it replays what was sent.
 */
import type { RequestAnalysis } from "../cache/analyzer.ts";
import { billedEquivalent, DEFAULT_PRICING } from "../cache/pricing.ts";
import type { RunSummary } from "../cache/summary.ts";
import { findThinkingPolicyRow } from "../thinking/index.ts";
import type { Arm, ArmStartOptions } from "./arms.ts";
import { readSessionText, replaySession, type ReplayResult } from "./replay.ts";
import type { ReplaySummarySource } from "./replay-summaries.ts";
import { parseSessionText, type SessionDiagnostic } from "./session-file.ts";

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
  calibration: { total_error: number; prompt_size_error: number; total_error_ttl_only: number };
  external_invalidations: number;
  skipped: { nonAnthropic: number; unbilled: number };
  diagnostics: SessionDiagnostic[];
  arms: Record<string, ArmReport>;
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
  onProgress?: (p: ArmProgress) => void;
}

/** The most used Anthropic model of the recording and whether it drops closed-cycle thinking. */
export function sessionModel(entries: ReadonlyArray<Record<string, unknown>>): { model: string; closedCycleThinking: "dropped" | "billed"; assistants: number } {
  const counts = new Map<string, { n: number; provider: string; api: string }>();
  let assistants = 0;
  for (const e of entries) {
    const m = e.message as { role?: string; api?: string; provider?: string; model?: string } | undefined;
    if (e.type !== "message" || m?.role !== "assistant") continue;
    assistants++;
    if (m.api !== "anthropic-messages" || !m.model) continue;
    const c = counts.get(m.model) ?? { n: 0, provider: m.provider ?? "anthropic", api: m.api };
    c.n++;
    counts.set(m.model, c);
  }
  const top = [...counts.entries()].sort((a, b) => b[1].n - a[1].n)[0];
  if (!top) return { model: "", closedCycleThinking: "dropped", assistants };
  const row = findThinkingPolicyRow({ provider: top[1].provider, modelId: top[0], api: top[1].api });
  return { model: top[0], closedCycleThinking: row?.behaviour === "drops-closed-cycle" ? "dropped" : "billed", assistants };
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

function inputCost(a: RunSummary): number {
  return billedEquivalent({ uncached: a.uncached, write5m: a.write5m, write1h: a.write1h, read: a.read, output: 0 }, DEFAULT_PRICING);
}

function seriesOf(analysis: readonly RequestAnalysis[]): ArmSeries {
  return { contextTokens: analysis.map((a) => a.totalTokens), read: analysis.map((a) => a.read), write: analysis.map((a) => a.write) };
}

function armReport(arm: Arm, r: ReplayResult, summarizer: number, flushes: ReturnType<ReturnType<Arm["start"]>["totals"]>["flushes"], bare: RunSummary | undefined): ArmReport {
  const s = r.summary;
  const billed = inputCost(s);
  const bareInput = bare ? inputCost(bare) : billed;
  const bareTotal = bare ? bareInput + DEFAULT_PRICING.output * bare.output : billed + DEFAULT_PRICING.output * s.output;
  const withOutput = billed + summarizer + DEFAULT_PRICING.output * s.output;
  const sizes = r.analysis.map((a) => a.totalTokens);
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
  };
}

export function reportSession(options: ReportSessionOptions): SessionRun {
  const { text, diagnostics: readErrors } = readSessionText(options.file, options.text);
  const parsed = parseSessionText(text, options.file);
  const versionNote = oldVersionDiagnostic(parsed.entries, parsed.lineOf, options.file);
  const { model, closedCycleThinking, assistants } = sessionModel(parsed.entries);
  const arms = options.arms;
  const reports: Record<string, ArmReport> = {};
  const series: Record<string, ArmSeries> = {};
  let bare: ReplayResult | undefined;
  let expected = assistants;
  const seen = new Set<string>();
  const armDiagnostics: SessionDiagnostic[] = [];
  arms.forEach((arm, armIndex) => {
    const run = arm.start({ summaries: options.summaries, ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}) });
    const progress = (request: number, armDone: boolean) =>
      options.onProgress?.({ arm: arm.name, armIndex, armCount: arms.length, request, requests: Math.max(expected, request), armDone });
    const result = replaySession({
      file: options.file,
      text,
      ttlOnlyAnalysis: armIndex === 0,
      analyzer: { closedCycleThinking },
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
    reports[arm.name] = armReport(arm, result, totals.summarizer.billed, totals.flushes, bare?.summary);
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
      calibration: {
        total_error: first?.calibration.total_error ?? 0,
        prompt_size_error: first?.calibration.prompt_size_error ?? 0,
        total_error_ttl_only: first?.calibration.total_error_ttl_only ?? 0,
      },
      external_invalidations: first?.externalInvalidations.length ?? 0,
      skipped: first?.skipped ?? { nonAnthropic: 0, unbilled: 0 },
      diagnostics,
      arms: reports,
    },
    series,
  };
}
