/**
 * Summaries during a replay: no model is called, so every summary comes from a
 * deterministic stand-in. Two are offered:
 *
 * - `size-model` (default): what a model summary would weigh (the formula lives in
 *   src/summarize/summary-size.ts, shared with `summarizer.mode: "auto"`'s choice). With
 *   R = raw tokens of the batch's outputs (result characters / 3.1, the estimator's code ratio):
 *     summary tokens S = min(R, round(120 + 0.04 × R))
 *     summarizer input I = tokens of the real summarizer request (system prompt + the batch
 *                          prompt `buildSummaryPrompt` builds), characters / 3.1
 *     summarizer cost    = I × 1 + S × 5   (billed-equivalent units: uncached input tokens of
 *                          the session model, no cache on the summarizer call, output at 5×)
 *   The summary text is the extractive summary of the batch cut or padded to S × 3.2
 *   characters (the estimator's prose ratio), so the replayed wire carries S tokens, then
 *   repaired as the live summarizer repairs a model summary: paths, commands, exit codes and
 *   error lines the cut dropped are appended verbatim (so an output made of error lines stays
 *   raw, as it would live).
 * - `extractive`: the real deterministic summarizer (`summarizer.mode: "extractive"`), cost 0.
 *
 * In both, a summary that is not shorter than the outputs keeps them raw (`keepRawWhenLonger`).
 * The stand-in only replaces model calls: which batches reach it is the engine's decision, the
 * routes its `summarize` effect carries, as for the live host.
 */
import type { KeeperSettings } from "../settings/schema.ts";
import type { BatchSummary, ToolBatch } from "../summarize/batch.ts";
import { extractiveSummaryText, keepRawWhenLonger, summarizeExtractively } from "../summarize/extractive.ts";
import { findMissingFacts } from "../summarize/fidelity.ts";
import { appendMissingFacts } from "../summarize/summary-prompt.ts";
import { DEFAULT_SUMMARY_SIZE, estimateSummaryTokens, SUMMARY_INPUT_CHARS_PER_TOKEN, summaryCallSize } from "../summarize/summary-size.ts";

export type ReplaySummarySource = "size-model" | "extractive";

export const REPLAY_SUMMARY_SOURCES: readonly ReplaySummarySource[] = ["size-model", "extractive"];

export interface SizeModel {
  baseTokens: number;
  rate: number;
  /** Characters per token of tool output and of the summarizer prompt. */
  inputCharsPerToken: number;
  /** Characters per token of the summary text. */
  summaryCharsPerToken: number;
  /** Price of one summarizer output token, in uncached input tokens. */
  outputPrice: number;
}

/** The summary size and call size come from `src/summarize/summary-size.ts`, as the live `auto` choice uses them. */
export const DEFAULT_SIZE_MODEL: SizeModel = { ...DEFAULT_SUMMARY_SIZE, inputCharsPerToken: SUMMARY_INPUT_CHARS_PER_TOKEN, summaryCharsPerToken: 3.2, outputPrice: 5 };

/** One line for the report output. */
export function describeSummarySource(source: ReplaySummarySource, m: SizeModel = DEFAULT_SIZE_MODEL): string {
  if (source === "extractive") return "summaries: the deterministic extractive summarizer (no model call, cost 0)";
  return (
    `summaries: deterministic size model for the batches summarizer.mode sends to a model (no model call; the others extractive, cost 0) — summary tokens = min(raw, ${m.baseTokens} + ${m.rate} × raw); ` +
    `summarizer cost = prompt tokens × 1 + summary tokens × the session model's output price (${m.outputPrice} for Claude; uncached input token units)`
  );
}

export interface ReplaySummary {
  summary: BatchSummary;
  /** Summarizer cost in billed-equivalent units (uncached input tokens of the session model). */
  billed: number;
}

export type ReplaySummarizer = (batch: ToolBatch) => ReplaySummary;

export function sizeModelSummaryTokens(rawTokens: number, m: SizeModel = DEFAULT_SIZE_MODEL): number {
  return estimateSummaryTokens(rawTokens, m);
}

const FILLER = "size-model filler ";

/** `text` cut (with an ellipsis) or padded with filler to exactly `chars` characters. */
export function fitToLength(text: string, chars: number): string {
  const n = Math.max(0, Math.round(chars));
  if (text.length >= n) return n === 0 ? "" : `${text.slice(0, n - 1)}…`;
  const pad = n - text.length - 1;
  if (pad < 0) return text;
  return `${text}\n${FILLER.repeat(Math.ceil(pad / FILLER.length)).slice(0, pad)}`;
}

export function sizeModelSummarizer(m: SizeModel = DEFAULT_SIZE_MODEL): ReplaySummarizer {
  return (batch) => {
    const { rawTokens, promptTokens: inputTokens } = summaryCallSize(batch, m.inputCharsPerToken);
    const outputTokens = sizeModelSummaryTokens(rawTokens, m);
    const cut = fitToLength(extractiveSummaryText(batch), outputTokens * m.summaryCharsPerToken);
    // As the live summarizer repairs a model summary: facts the cut dropped are appended verbatim.
    const text = appendMissingFacts(cut, findMissingFacts(batch, cut));
    const summary = keepRawWhenLonger(batch, { batchKey: batch.batchKey, text, source: "model", inputTokens, outputTokens, cost: 0 });
    return { summary, billed: inputTokens + outputTokens * m.outputPrice };
  };
}

export function extractiveReplaySummarizer(): ReplaySummarizer {
  return (batch) => ({ summary: summarizeExtractively(batch), billed: 0 });
}

/** `outputPrice`: the session model's output price in units of its input price (default 5, Anthropic's). */
export function replaySummarizer(source: ReplaySummarySource, outputPrice?: number): ReplaySummarizer {
  if (source === "extractive") return extractiveReplaySummarizer();
  return sizeModelSummarizer(outputPrice === undefined ? DEFAULT_SIZE_MODEL : { ...DEFAULT_SIZE_MODEL, outputPrice });
}
