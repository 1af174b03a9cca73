/**
 * `summarizer.mode: "auto"`: ask the model for a batch's summary only when the pruning it
 * buys repays the call. Users pay for tokens: the keeper never pays a summarizer more than
 * pruning the batch saves.
 *
 * All figures in uncached input tokens of the session model (pricing: input 1, cache read
 * 0.1, output 5 — src/cache/pricing.ts):
 *
 *   R  raw tokens of the batch's outputs
 *   S  summary tokens = min(R, round(120 + 0.04 × R))            (summary-size.ts)
 *   F  tokens of the facts every summary keeps verbatim (summary-size.ts): the summary left
 *      in context is K = min(R, max(S, F)) — the model writes S, the repair appends the rest
 *   P  prompt overhead: the summarizer request beyond the outputs (system prompt, framing);
 *      negative when the prompt sends only the head and tail of a long output
 *   N  expected requests that will still read the pruned history (the request horizon of
 *      src/discipline/request-horizon.ts, as the cache discipline's gate uses it)
 *
 *   summarizer cost  C = (R + P) × 1 + S × 5      the call reads the outputs at full price
 *                                                  (it is not cached) and writes S tokens
 *   pruning saving   G = (R − K) × 0.1 × N         each later request reads K instead of R
 *                                                  tokens from the cache
 *
 *   model      when G ≥ C   (equivalently N ≥ C / ((R − K) × 0.1), the break-even)
 *   extractive otherwise    (the deterministic summary costs nothing)
 *
 * Example: R = 1000 → S = 160, P = 300, F ≤ 160: C = 1300 + 800 = 2100; G = 84 × N; the model
 * pays from N = 25 on. An output made of error lines (F ≈ R) never pays: the summary that
 * keeps them all is no shorter than the output, which then stays raw. With the horizon capped at 30 requests, only long, warm sessions ask it.
 *
 * G is measured against keeping the outputs raw. The extractive summary prunes too, so what
 * the model adds over it is less than G: G is an upper bound on what the call can earn, and a
 * call this rule rejects can never pay for itself.
 */
import { DEFAULT_PRICING } from "../cache/pricing.ts";
import type { ToolBatch } from "./batch.ts";
import { SUMMARY_SYSTEM_PROMPT } from "./summary-prompt.ts";
import { DEFAULT_SUMMARY_SIZE, estimateSummaryTokens, SUMMARY_INPUT_CHARS_PER_TOKEN, summaryCallSize, type SummarySizeShape } from "./summary-size.ts";

export type ChosenSummarySource = "model" | "extractive";

/** Prices in uncached input tokens; default Anthropic's (read 0.1, output 5). */
export interface SummaryChoicePricing {
  uncached: number;
  read: number;
  output: number;
}

/** Used when the caller does not know the prompt's framing: the system prompt alone. */
export const DEFAULT_PROMPT_OVERHEAD_TOKENS = Math.ceil(SUMMARY_SYSTEM_PROMPT.length / SUMMARY_INPUT_CHARS_PER_TOKEN);

export interface SummaryChoiceInput {
  /** R: raw tokens of the batch's outputs. */
  rawTokens: number;
  /** N: requests expected to read the pruned batch (the request horizon). */
  expectedRequests: number;
  /** P: summarizer prompt tokens besides the outputs (negative when long outputs are cut). Default: the system prompt's. */
  promptOverheadTokens?: number;
  /** F: tokens of the facts a summary keeps verbatim. Default 0. */
  factTokens?: number;
  pricing?: SummaryChoicePricing;
  size?: SummarySizeShape;
}

export interface SummaryChoiceNumbers {
  rawTokens: number;
  summaryTokens: number;
  /** K = min(R, max(S, F)): what stays in context in place of the outputs. */
  keptSummaryTokens: number;
  promptOverheadTokens: number;
  expectedRequests: number;
  /** C = max(0, R + P) × uncached + S × output. */
  summarizerCost: number;
  /** G = (R − K) × read × N. */
  pruningSaving: number;
  /** N from which the model pays: C / ((R − K) × read); Infinity when K = R. */
  breakEvenRequests: number;
}

export interface SummaryChoice {
  source: ChosenSummarySource;
  reason: string;
  numbers: SummaryChoiceNumbers;
}

const fmt = (n: number) => (Number.isFinite(n) ? (Number.isInteger(n) ? String(n) : n.toFixed(1)) : "never");

export function chooseSummarySource(input: SummaryChoiceInput): SummaryChoice {
  const pricing = input.pricing ?? DEFAULT_PRICING;
  const R = Math.max(0, input.rawTokens);
  const N = Number.isFinite(input.expectedRequests) ? Math.max(0, input.expectedRequests) : 0;
  const P = input.promptOverheadTokens ?? DEFAULT_PROMPT_OVERHEAD_TOKENS;
  const S = estimateSummaryTokens(R, input.size ?? DEFAULT_SUMMARY_SIZE);
  const K = Math.min(R, Math.max(S, input.factTokens ?? 0));
  const perRequest = (R - K) * pricing.read;
  const summarizerCost = Math.max(0, R + P) * pricing.uncached + S * pricing.output;
  const pruningSaving = perRequest * N;
  const breakEvenRequests = perRequest > 0 ? summarizerCost / perRequest : Number.POSITIVE_INFINITY;
  const numbers: SummaryChoiceNumbers = { rawTokens: R, summaryTokens: S, keptSummaryTokens: K, promptOverheadTokens: P, expectedRequests: N, summarizerCost, pruningSaving, breakEvenRequests };
  const pays = perRequest > 0 && pruningSaving >= summarizerCost;
  const sums = `saving (${R} − ${K}) × ${pricing.read} × ${fmt(N)} = ${fmt(pruningSaving)} vs summarizer (${R} + ${P}) + ${pricing.output} × ${S} = ${fmt(summarizerCost)}`;
  return pays
    ? { source: "model", reason: `model: ${sums}`, numbers }
    : { source: "extractive", reason: `extractive: ${sums}; the model pays from ${fmt(breakEvenRequests)} requests`, numbers };
}

/** The choice for one batch: R, P and F measured on the request the summarizer would get. */
export function chooseSummarySourceForBatch(batch: ToolBatch, options: { expectedRequests: number; pricing?: SummaryChoicePricing }): SummaryChoice {
  const size = summaryCallSize(batch);
  return chooseSummarySource({
    rawTokens: size.rawTokens,
    expectedRequests: options.expectedRequests,
    promptOverheadTokens: size.promptTokens - size.rawTokens,
    factTokens: size.factTokens,
    ...(options.pricing ? { pricing: options.pricing } : {}),
  });
}
