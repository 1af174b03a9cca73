/**
 * Parts of an original by line (pure): a line range, or the lines matching a pattern with a few
 * lines of context around each, merged where they touch. Every slice is the original's own
 * characters (`original.slice(start, end)`, from the start of its first line to the end of its
 * last, the last line's newline left out), so what recall returns of a part is byte for byte
 * what the output held there.
 *
 * Lines are split at "\n" (a "\r" before it stays in its line); a final newline does not start
 * another line. Line numbers are 1-based.
 */

export interface LineSlice {
  startLine: number;
  endLine: number;
  /** Character offsets in the original: `text === original.slice(start, end)`. */
  start: number;
  end: number;
  text: string;
}

export interface LineIndex {
  /** Offset of each line's first character. */
  starts: number[];
  /** Offset just past each line's last character (before its newline). */
  ends: number[];
}

export function lineIndex(original: string): LineIndex {
  const starts: number[] = [];
  const ends: number[] = [];
  let at = 0;
  while (at < original.length) {
    const nl = original.indexOf("\n", at);
    starts.push(at);
    ends.push(nl < 0 ? original.length : nl);
    if (nl < 0) break;
    at = nl + 1;
  }
  return { starts, ends };
}

export function lineCount(original: string): number {
  return lineIndex(original).starts.length;
}

function sliceOf(original: string, index: LineIndex, startLine: number, endLine: number): LineSlice {
  const start = index.starts[startLine - 1]!;
  const end = index.ends[endLine - 1]!;
  return { startLine, endLine, start, end, text: original.slice(start, end) };
}

export type SliceError = { error: string };

/** Lines `startLine`–`endLine` (inclusive; `endLine` defaults to the last line, and is capped to it). */
export function lineRange(original: string, startLine: number, endLine?: number): LineSlice | SliceError {
  const index = lineIndex(original);
  const total = index.starts.length;
  if (total === 0) return { error: "the output is empty: it has no lines." };
  if (!Number.isInteger(startLine) || startLine < 1) return { error: `startLine must be a line number from 1 (got ${startLine}).` };
  if (startLine > total) return { error: `startLine ${startLine} is past the last line: the output has ${total} line(s).` };
  const last = endLine ?? total;
  if (!Number.isInteger(last) || last < startLine) return { error: `endLine (${last}) must be a line number not before startLine (${startLine}).` };
  return sliceOf(original, index, startLine, Math.min(last, total));
}

export interface PatternMatches {
  /** The matching lines' numbers. */
  matched: number[];
  /** Each match widened by `context` lines, overlapping or adjacent windows merged. */
  slices: LineSlice[];
}

/** Compiles a model-given pattern (a JavaScript regular expression, no flags), or says why it cannot. */
export function compilePattern(pattern: string): RegExp | SliceError {
  if (pattern === "") return { error: "pattern is empty: give a regular expression, or leave pattern out for the whole output." };
  try {
    return new RegExp(pattern);
  } catch (e) {
    return { error: `pattern is not a valid regular expression (JavaScript syntax): ${(e as Error).message}` };
  }
}

/** The lines of `original` (within `from`–`to`, 1-based inclusive) that `re` matches, with `context` lines around them. */
export function matchingSlices(original: string, re: RegExp, context: number, from = 1, to = Number.MAX_SAFE_INTEGER): PatternMatches {
  const index = lineIndex(original);
  const total = index.starts.length;
  const last = Math.min(to, total);
  const matched: number[] = [];
  const plain = new RegExp(re.source, re.flags.replace(/[gy]/g, ""));
  for (let line = Math.max(1, from); line <= last; line++) {
    if (plain.test(original.slice(index.starts[line - 1], index.ends[line - 1]))) matched.push(line);
  }
  const slices: LineSlice[] = [];
  let open: [number, number] | undefined;
  for (const line of matched) {
    const a = Math.max(Math.max(1, from), line - context);
    const b = Math.min(last, line + context);
    if (open && a <= open[1] + 1) open[1] = Math.max(open[1], b);
    else {
      if (open) slices.push(sliceOf(original, index, open[0], open[1]));
      open = [a, b];
    }
  }
  if (open) slices.push(sliceOf(original, index, open[0], open[1]));
  return { matched, slices };
}
