/**
 * How big a model summary and its summarizer call are, estimated without calling a model.
 * One formula, shared by the live `auto` choice (summary-choice.ts) and the replay report's
 * size model (src/report/replay-summaries.ts):
 *
 *   R = raw tokens of the batch's outputs      = ceil(result characters / 3.1)
 *   S = summary tokens                         = min(R, round(120 + 0.04 × R))
 *   I = tokens of the summarizer request       = ceil((system prompt + batch prompt) / 3.1)
 *   F = tokens of the facts any summary keeps   = ceil(the verbatim facts block / 3.1)
 *       (paths, commands, exit codes, error lines: the live summarizer appends whatever a
 *       model summary dropped, so a kept summary is never shorter than F)
 *
 * 3.1 characters per token is the token estimator's ratio for code and tool output.
 */
import type { ToolBatch } from "./batch.ts";
import { rawLength } from "./extractive.ts";
import { findMissingFacts } from "./fidelity.ts";
import { appendMissingFacts, buildSummaryPrompt, SUMMARY_SYSTEM_PROMPT } from "./summary-prompt.ts";

export interface SummarySizeShape {
  /** Fixed part of a summary, in tokens. */
  baseTokens: number;
  /** Share of the raw tokens a summary adds on top of the fixed part. */
  rate: number;
}

export const DEFAULT_SUMMARY_SIZE: SummarySizeShape = { baseTokens: 120, rate: 0.04 };

/** Characters per token of tool output and of the summarizer prompt. */
export const SUMMARY_INPUT_CHARS_PER_TOKEN = 3.1;

/** S = min(R, round(base + rate × R)): never more than the outputs it replaces. */
export function estimateSummaryTokens(rawTokens: number, shape: SummarySizeShape = DEFAULT_SUMMARY_SIZE): number {
  return Math.min(rawTokens, Math.round(shape.baseTokens + shape.rate * rawTokens));
}

/** R, I and F for one batch: what the summarizer would read, and what any summary keeps. */
export interface SummaryCallSize {
  rawTokens: number;
  /** The whole summarizer request (system prompt + batch prompt), outputs included. */
  promptTokens: number;
  /** The verbatim facts (paths, commands, exit codes, error lines) as the repair appends them. */
  factTokens: number;
}

/** The facts block the live summarizer would append to an empty summary: every fact, verbatim. */
export function verbatimFactsText(batch: ToolBatch): string {
  return appendMissingFacts("", findMissingFacts(batch, ""));
}

export function summaryCallSize(batch: ToolBatch, charsPerToken: number = SUMMARY_INPUT_CHARS_PER_TOKEN): SummaryCallSize {
  return {
    rawTokens: Math.ceil(rawLength(batch) / charsPerToken),
    promptTokens: Math.ceil((SUMMARY_SYSTEM_PROMPT.length + buildSummaryPrompt(batch).length) / charsPerToken),
    factTokens: Math.ceil(verbatimFactsText(batch).length / charsPerToken),
  };
}
