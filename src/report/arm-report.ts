/**
 * One arm's replay reduced to the report's figures (`ArmReport`, documented in
 * session-report.ts) and its per-request series for the chart.
 */
import type { RequestAnalysis } from "../cache/analyzer.ts";
import type { ModelRef } from "../cache/cache-rules.ts";
import { ratesAt, type CostModel } from "../cache/cost-model.ts";
import type { Arm } from "./arms.ts";
import type { ReplayResult } from "./replay.ts";
import type { ArmReport, ArmSeries } from "./session-report.ts";
import { dollars, inputCost, outputCost } from "./session-figures.ts";

export function seriesOf(analysis: readonly RequestAnalysis[]): ArmSeries {
  return { contextTokens: analysis.map((a) => a.totalTokens), read: analysis.map((a) => a.read), write: analysis.map((a) => a.write) };
}

export interface ArmInputs {
  arm: Arm;
  r: ReplayResult;
  totals: ReturnType<ReturnType<Arm["start"]>["totals"]>;
  bare: ReplayResult | undefined;
  /** The bare arm's Pi compactions (their summary requests), in billed-equivalent units. */
  bareCompactions?: number;
  /** The session model, for the summarizer's dollars. */
  main: CostModel;
}

export function armReport({ arm, r, totals, bare, bareCompactions = 0, main }: ArmInputs): ArmReport {
  const s = r.summary;
  const flushes = totals.flushes;
  const summarizer = totals.summarizer.billed;
  const compaction = totals.compactions?.billed ?? 0;
  const billed = inputCost(r);
  const bareInput = bare ? inputCost(bare) + bareCompactions : billed + compaction;
  const bareTotal = bare ? bareInput + outputCost(bare) : billed + compaction + outputCost(r);
  const withOutput = billed + summarizer + compaction + outputCost(r);
  const sizes = r.analysis.map((a) => a.totalTokens);
  const rates = ratesAt(main.prices.rates, 0);
  const usdSummarizer = totals.summarizerUsd ?? (totals.summarizer.inputTokens * rates.input + totals.summarizer.outputTokens * rates.output) / 1e6;
  const usdInput = dollars(r, false);
  // Pi's compactions, and on a keeper recording the background summaries the keeper never applied.
  const usdCompaction = (totals.compactions?.usd ?? 0) + (totals.unappliedCompactionUsd ?? 0);
  return {
    name: arm.name,
    description: arm.description,
    requests: s.requests,
    billed_input: billed,
    summarizer_cost: summarizer,
    billed_with_output: withOutput,
    ratio_to_bare: bareInput > 0 ? (billed + summarizer + compaction) / bareInput : 0,
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
    loop_flushes: flushes.filter((f) => f.reason === "loop").length,
    summarizer_calls: flushes.reduce((n, f) => n + f.modelBatches, 0),
    compactions: totals.compactions?.count ?? 0,
    compaction_cost: compaction,
    usd_input: usdInput,
    usd_summarizer: usdSummarizer,
    usd_compaction: usdCompaction,
    usd_total: usdInput + usdSummarizer + usdCompaction + (dollars(r, true) - usdInput),
  };
}
/** The session model's reference (the most used model's first request). */
export function mainRef(r: ReplayResult, model: string): ModelRef {
  const q = r.requests.find((x) => x.model === model) ?? r.requests[0];
  return q ? { provider: q.provider, api: q.api, model: q.model } : { provider: "", api: "", model };
}

