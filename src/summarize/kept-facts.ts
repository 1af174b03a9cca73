/**
 * The lines of a failed call's output an agent comes back for, kept verbatim within a size budget
 * when the output itself is pruned (a collapsed chain keeps them under the call's line). In order:
 *
 * 1. failing tests, as test runners print them (`FAIL …`, `✕ …`, `× …`, `● suite › test`,
 *    `not ok N - …`, `--- FAIL: …`, `FAILED …`, `test … FAILED`, `1) …`), one line per test;
 * 2. diagnostics — compiler and linter errors (`error TS2345:`, `12:7  error …`, `error[E0308]:`),
 *    exceptions (`SomeError: …`), lines at ERROR or FATAL.
 *
 * A call that succeeded keeps nothing: its output is file content or a result the answer after
 * the chain speaks for (a test run with failures, a compiler or linter reporting errors, exits
 * non-zero).
 *
 * Lines that only count results (`# fail 2`, `Tests: 2 failed, 38 passed`, `Found 4 errors in 3
 * files.`) are left out: the kept lines name what they count. Lines are trimmed, cut to
 * `maxLineChars`, never repeated, and taken in that order until `maxChars` is spent (a line that
 * does not fit is skipped; a shorter later one may still fit).
 *
 * What is kept was chosen by measurement on the looking-back wire benchmark (doc/lookback-bench.md):
 * failing tests paid on every tuning seed and density, diagnostics of failed calls about paid for
 * themselves; any line with an error word (`No such file or directory` of a missing path the call
 * line names already), error lines of outputs that succeeded (log files read), short outputs kept
 * whole, and the values of config files read cost more, in the requests that carried them, than
 * the recalls they saved.
 */
import { parseExitStatus } from "./output-facts.ts";
import { splitLines, truncateWithEllipsis } from "./text-measure.ts";

export interface KeptFactsOptions {
  /** Characters of kept lines per call (their sum, without separators). 0 keeps nothing. */
  maxChars: number;
  /** A longer line is cut with an ellipsis. Default 240. */
  maxLineChars?: number;
  /** Lines kept already (elsewhere in the same text): not kept again, no budget spent on them. */
  skip?: ReadonlySet<string>;
}

export interface FactSource {
  toolName: string;
  resultText: string;
  isError: boolean;
}

export const TEST_FAILURE = /^(?:FAIL(?:ED)?\b|✕|✗|✘|×|●(?!.*\bpassed\b)|not ok\b|--- FAIL:|test .+ \.\.\. FAILED$|\d+\) \S)/;
const DIAGNOSTIC = /(?:^|\s|\()(?:error|fatal)(?:\s+[A-Z]+\d+|\[[A-Z]?\d+\])?:|\berror\s+(?:TS|CS|E|C)\d+\b|^\d+:\d+\s+error\b|\b[A-Z]\w*(?:Error|Exception):\s|(?:^|\s)(?:ERROR|FATAL|CRITICAL)\b/;
const COUNT = "(?:errors?|failed|failures?|problems?|passed|warnings?|files?|total|tests?)";
const SUMMARY_LINE = new RegExp(`^#\\s*(?:fail|pass|tests?|ok)\\b|\\b\\d+\\s+${COUNT}\\b.*\\b\\d+\\s+${COUNT}\\b|\\(\\d+\\)\\s*$|^Found \\d+ errors?\\b`, "i");

/** What names a failing test, without the runner's marker and timing (two lines naming one test keep one). */
function testCore(line: string): string {
  return line.replace(/^(?:FAIL(?:ED)?|✕|✗|✘|×|●|not ok\s+\d+\s+-|--- FAIL:)\s*/, "").replace(/\s*\(?\d+(?:\.\d+)?\s?m?s\)?$/, "");
}

/** Output lines, trimmed, without Pi's trailing status line and blank lines. */
function contentLines(text: string): string[] {
  const lines = splitLines(text).map((l) => l.trim());
  if (parseExitStatus(text) !== undefined) {
    let end = lines.length;
    while (end > 0 && lines[end - 1] === "") end--;
    lines.length = Math.max(0, end - 1);
  }
  return lines.filter((l) => l !== "");
}

/** Kept lines of one call's output, verbatim (trimmed), in the order above. */
export function keptFacts(call: FactSource, options: KeptFactsOptions): string[] {
  if (options.maxChars <= 0 || !call.isError) return [];
  const maxLine = options.maxLineChars ?? 240;
  const lines = contentLines(call.resultText).filter((l) => !SUMMARY_LINE.test(l));
  const out: string[] = [];
  let used = 0;
  const add = (raw: string): void => {
    const line = truncateWithEllipsis(raw, maxLine);
    if (out.includes(line) || options.skip?.has(line) || used + line.length > options.maxChars) return;
    out.push(line);
    used += line.length;
  };
  const skipCores = new Set([...(options.skip ?? [])].filter((l) => TEST_FAILURE.test(l)).map(testCore));
  for (const l of lines) {
    if (!TEST_FAILURE.test(l)) continue;
    const line = truncateWithEllipsis(l, maxLine);
    const core = testCore(line);
    if (skipCores.has(core)) continue;
    // Two lines naming one test keep the more specific (`● suite › test` over `✕ test (3 ms)`).
    const same = out.findIndex((kept) => TEST_FAILURE.test(kept) && (testCore(kept).includes(core) || core.includes(testCore(kept))));
    if (same >= 0) {
      if (core.length <= testCore(out[same]!).length || used - out[same]!.length + line.length > options.maxChars) continue;
      used += line.length - out[same]!.length;
      out[same] = line;
      continue;
    }
    add(l);
  }
  for (const l of lines) if (!TEST_FAILURE.test(l) && DIAGNOSTIC.test(l)) add(l);
  return out;
}
