/**
 * The deterministic summary of a tool batch: no model, no clock, same input → same text.
 * Used on its own, and as the fallback whenever the model summary fails.
 *
 * Per call it keeps the tool name, the arguments (commands and paths whole, other long
 * values cut with an ellipsis), the exit status, line and byte counts, a failed run's failing
 * tests and the error lines (up to 20 each, with how many there were), and the file paths the
 * output mentions. A short output (a few
 * lines) is kept whole; a longer one is not sampled: its first and last lines rarely say what
 * it showed, the original is one `keeper_recall` away, and every character of a summary is
 * read again by each later request.
 */
import { type BatchSummary, type CapturedCall, type ToolBatch, imageNote, resultWeight } from "./batch.ts";
import {
  type CallFacts,
  type ExitStatus,
  extractCallFacts,
  isCommandKey,
  isPathKey,
  looksLikePathValue,
} from "./output-facts.ts";
import { TEST_FAILURE } from "./kept-facts.ts";
import { splitLines, truncateWithEllipsis } from "./text-measure.ts";

export interface ExtractiveOptions {
  /** Non-path, non-command argument values longer than this are cut. Default 160. */
  maxArgChars?: number;
  /** An output of at most this many lines is shown whole. Default 3. */
  wholeOutputLines?: number;
  /** … and of at most this many characters. Default 300. */
  wholeOutputChars?: number;
  /** Error lines listed per call (the count of all of them is always given). Default 20. */
  maxErrorLines?: number;
  /** Output paths listed per call. Default 40. */
  maxPaths?: number;
}

const DEFAULTS: Required<ExtractiveOptions> = {
  maxArgChars: 160,
  wholeOutputLines: 3,
  wholeOutputChars: 300,
  maxErrorLines: 20,
  maxPaths: 40,
};

export function formatArgument(key: string, value: unknown, maxArgChars: number): string {
  if (typeof value === "string") {
    const whole = isCommandKey(key) || isPathKey(key) || looksLikePathValue(value);
    return `${key}: ${whole ? value : truncateWithEllipsis(value, maxArgChars)}`;
  }
  if (isPathKey(key) && Array.isArray(value) && value.every((v) => typeof v === "string")) {
    return `${key}: ${value.join(", ")}`;
  }
  const json = JSON.stringify(value) ?? String(value);
  return `${key}: ${truncateWithEllipsis(json, maxArgChars)}`;
}

export function describeStatus(status: ExitStatus | undefined, isError: boolean): string {
  if (status === undefined) return isError ? "error" : "ok";
  switch (status.kind) {
    case "exit":
      return `exit code ${status.code}`;
    case "timeout":
      return status.code === undefined
        ? `timed out after ${status.seconds} s`
        : `timed out after ${status.seconds} s (shell exited with code ${status.code})`;
    case "aborted":
      return "aborted";
    case "no-exit-code":
      return "terminated without an exit code";
  }
}

/** Output lines without the trailing status line Pi appends and the blank lines around it. */
function contentLines(text: string, status: ExitStatus | undefined): string[] {
  const lines = splitLines(text);
  let end = lines.length;
  while (end > 0 && lines[end - 1].trim() === "") end--;
  if (status !== undefined && end > 0) end--;
  while (end > 0 && lines[end - 1].trim() === "") end--;
  return lines.slice(0, end);
}

/**
 * A call's status line after `status: `: its status, then its size — `12 lines · 480 bytes`, or
 * for a result with images what was left out and how to get it back (never the length of Pi's
 * one-line note beside an image as if it were the output).
 */
export function statusLine(status: string, call: Pick<CapturedCall, "images">, facts: Pick<CallFacts, "lineCount" | "byteCount">): string {
  const images = imageNote(call.images);
  if (!images) return `${status} · ${facts.lineCount} lines · ${facts.byteCount} bytes`;
  return `${status} · ${images}${facts.lineCount > 1 ? ` · text beside it: ${facts.lineCount} lines · ${facts.byteCount} bytes` : ""}`;
}

function formatCall(call: CapturedCall, position: number, facts: CallFacts, o: Required<ExtractiveOptions>): string {
  const out: string[] = [`[${position}] ${call.toolName}`];
  for (const [key, value] of Object.entries(call.arguments ?? {})) out.push(`  ${formatArgument(key, value, o.maxArgChars)}`);

  const statusCode = facts.status?.kind === "exit" || facts.status?.kind === "timeout" ? facts.status.code : undefined;
  const otherCodes = facts.exitFacts.flatMap((f) => (f.kind === "code" && f.code !== statusCode ? [f.code] : []));
  const status = describeStatus(facts.status, call.isError);
  out.push(`  status: ${statusLine(status, call, facts)}`);
  if (otherCodes.length > 0) out.push(`  exit codes mentioned: ${otherCodes.map((c) => `exit code ${c}`).join(", ")}`);

  const lines = contentLines(call.resultText, facts.status);
  const shownChars = lines.reduce((n, l) => n + l.length + 1, 0);
  if (lines.length > 0 && lines.length <= o.wholeOutputLines && shownChars <= o.wholeOutputChars) {
    out.push("  output:", ...lines.map((l) => `    ${l}`));
  }

  const soFar = () => out.join("\n");
  // A failed run's failing tests (what an agent comes back for), as its runner printed them.
  const failing = call.isError ? lines.map((l) => l.trim()).filter((l) => TEST_FAILURE.test(l) && !soFar().includes(l)) : [];
  if (failing.length > 0) {
    const shown = [...new Set(failing)].slice(0, o.maxErrorLines);
    const more = failing.length - shown.length;
    out.push(`  failing tests (${failing.length}${more > 0 ? `, ${more} not shown` : ""}):`, ...shown.map((l) => `    ${l}`));
  }
  const errors = facts.errorLines.filter((l) => !soFar().includes(l));
  if (errors.length > 0) {
    const shown = errors.slice(0, o.maxErrorLines);
    const more = errors.length - shown.length;
    out.push(`  error lines (${errors.length}${more > 0 ? `, ${more} not shown` : ""}):`, ...shown.map((l) => `    ${l}`));
  }

  const text = soFar();
  const paths = facts.outputPaths.filter((p) => !text.includes(p));
  if (paths.length > 0) {
    const shown = paths.slice(0, o.maxPaths);
    const more = paths.length - shown.length;
    out.push(`  paths (${paths.length}${more > 0 ? `, ${more} not shown` : ""}): ${shown.join(", ")}`);
  }
  return out.join("\n");
}

/** The extractive summary text of a batch (always produced, even when longer than raw). */
export function extractiveSummaryText(batch: ToolBatch, options: ExtractiveOptions = {}): string {
  const o = { ...DEFAULTS, ...options };
  return batch.calls.map((call, i) => formatCall(call, i + 1, extractCallFacts(call), o)).join("\n");
}

/** Characters of all result texts in the batch, an image at `IMAGE_WEIGHT_CHARS`: what a stub would replace. */
export function rawLength(batch: ToolBatch): number {
  return batch.calls.reduce((n, c) => n + resultWeight(c), 0);
}

/**
 * A summary unless it is not shorter than the outputs it replaces; then `source: "raw"`
 * with empty text (the outputs stay as they are). Usage stays: a model call was still paid.
 */
export function keepRawWhenLonger(batch: ToolBatch, summary: BatchSummary): BatchSummary {
  if (summary.text.length < rawLength(batch)) return summary;
  return { ...summary, text: "", source: "raw" };
}

export function summarizeExtractively(batch: ToolBatch, options: ExtractiveOptions = {}): BatchSummary {
  const text = extractiveSummaryText(batch, options);
  return keepRawWhenLonger(batch, { batchKey: batch.batchKey, text, source: "extractive", inputTokens: 0, outputTokens: 0, cost: 0 });
}
