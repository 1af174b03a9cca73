/**
 * The request sent to the summarizer model for one batch, and the repair that appends
 * any fact the model dropped.
 */
import type { ToolBatch } from "./batch.ts";
import { formatArgument, describeStatus, statusLine } from "./extractive.ts";
import { extractCallFacts } from "./output-facts.ts";
import { type MissingFacts, countMissing } from "./fidelity.ts";
import { sha256Hex } from "./text-measure.ts";

export const SUMMARY_SYSTEM_PROMPT = [
  "You compress the output of tool calls made by a coding agent so the agent can keep working with a shorter context.",
  "Write a compact factual summary of what the calls did and what their output showed.",
  "Rules:",
  "- Keep every file path, every command, every exit code and every error line exactly as written (verbatim, not paraphrased).",
  "- Keep numbers that matter: counts, line numbers, versions, test totals, sizes.",
  "- Keep identifiers the agent may need next: function, type, test and package names.",
  "- Drop repetition, progress noise, banners and boilerplate.",
  "- No preamble, no advice, no speculation. Plain text, terse lines. Refer to calls by their [n] number.",
].join("\n");

export interface PromptOptions {
  /** Output characters sent per call; longer outputs are sent as head and tail. Default 24000. */
  maxOutputCharsPerCall?: number;
  /** Argument values (other than commands and paths) are cut to this. Default 2000. */
  maxArgChars?: number;
}

function headAndTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  const omitted = text.length - 2 * half;
  return `${text.slice(0, half)}\n[… ${omitted} characters omitted …]\n${text.slice(text.length - half)}`;
}

/** The user message for one batch: each call with its arguments, status and (capped) output. */
export function buildSummaryPrompt(batch: ToolBatch, options: PromptOptions = {}): string {
  const maxOutput = options.maxOutputCharsPerCall ?? 24_000;
  const maxArg = options.maxArgChars ?? 2_000;
  const firstPositionByHash = new Map<string, number>();
  const parts: string[] = [`Summarize these ${batch.calls.length} tool call(s).`];
  batch.calls.forEach((call, i) => {
    const position = i + 1;
    const facts = extractCallFacts(call);
    const lines = [`[${position}] ${call.toolName}`];
    for (const [key, value] of Object.entries(call.arguments ?? {})) lines.push(`  ${formatArgument(key, value, maxArg)}`);
    lines.push(`  status: ${statusLine(describeStatus(facts.status, call.isError), call, facts)}`);
    const hash = sha256Hex(call.resultText);
    const earlier = firstPositionByHash.get(hash);
    if (earlier !== undefined) {
      lines.push(`  output: identical to the output of [${earlier}]`);
    } else {
      firstPositionByHash.set(hash, position);
      const shown = headAndTail(call.resultText, maxOutput);
      if (shown.length < call.resultText.length) {
        // The middle was cut: name the facts it held so the summary can still keep them.
        const kept = [...facts.errorLines, ...facts.outputPaths].filter((f) => !shown.includes(f));
        if (kept.length > 0) lines.push("  facts from the omitted middle (keep them):", ...kept.slice(0, 200).map((f) => `    ${f}`));
      }
      lines.push("  output:", "<<<", shown, ">>>");
    }
    parts.push(lines.join("\n"));
  });
  return parts.join("\n\n");
}

/** The model's summary with a verbatim list of whatever it dropped appended. */
export function appendMissingFacts(summary: string, missing: MissingFacts): string {
  if (countMissing(missing) === 0) return summary;
  const lines = ["", "Also in the output (verbatim):"];
  if (missing.commands.length > 0) lines.push("commands:", ...missing.commands.map((c) => `  ${c}`));
  if (missing.exitCodes.length > 0) lines.push(`status: ${missing.exitCodes.join(", ")}`);
  if (missing.errorLines.length > 0) lines.push("error lines:", ...missing.errorLines.map((l) => `  ${l}`));
  if (missing.paths.length > 0) lines.push(`paths: ${missing.paths.join(", ")}`);
  if (missing.images.length > 0) lines.push("images:", ...missing.images.map((l) => `  ${l}`));
  return summary.trimEnd() + "\n" + lines.join("\n");
}
