/**
 * A part of a recalled original (pure): a line range, or the lines matching a pattern with a
 * few lines of context, within the page size. Each part is the original's own characters under a
 * header saying which lines they are; `slices` in the result say where each one sits in the
 * original and in the answer's text, so a caller can check them byte for byte.
 */
import { compilePattern, lineCount, lineRange, type LineSlice, matchingSlices } from "./slices.ts";

/** Lines of context around each match when the model gives none. */
export const DEFAULT_CONTEXT_LINES = 2;
export const MAX_CONTEXT_LINES = 50;

export interface PartRequest {
  startLine?: number;
  endLine?: number;
  pattern?: string;
  context?: number;
}

export interface PartSlice {
  startLine: number;
  endLine: number;
  /** Character offsets in the original. */
  start: number;
  end: number;
  /** Where the slice's characters begin in the answer's text (after the header and group lines). */
  bodyStart: number;
}

export interface PartAnswer {
  /** The answer's text after its first (header) line. */
  body: string;
  /** What the header says after the ref and tool. */
  summary: string;
  slices: PartSlice[];
  totalLines: number;
  matches?: number;
}

export const wantsPart = (p: PartRequest): boolean => p.startLine !== undefined || p.endLine !== undefined || p.pattern !== undefined;

/** Whole lines of `s` from its start that fit in `limit` characters (at least one line). */
function fit(s: LineSlice, limit: number): LineSlice {
  if (s.text.length <= limit) return s;
  let cut = s.text.lastIndexOf("\n", limit);
  if (cut <= 0) cut = s.text.indexOf("\n");
  if (cut < 0) return s;
  const lines = s.text.slice(0, cut).split("\n").length;
  return { ...s, endLine: s.startLine + lines - 1, end: s.start + cut, text: s.text.slice(0, cut) };
}

/** The part of `original` asked for, or why it cannot be given. `headerChars` is the header's length plus its newline. */
export function partOf(original: string, req: PartRequest, limit: number, headerChars: (summary: string) => number): PartAnswer | { error: string } {
  const totalLines = lineCount(original);
  if (req.context !== undefined && (!Number.isInteger(req.context) || req.context < 0 || req.context > MAX_CONTEXT_LINES)) {
    return { error: `context must be a whole number of lines from 0 to ${MAX_CONTEXT_LINES} (got ${req.context}).` };
  }
  const range = lineRange(original, req.startLine ?? 1, req.endLine);
  if ("error" in range) return range;

  if (req.pattern === undefined) {
    const shown = fit(range, limit);
    const more = shown.endLine < range.endLine ? `; page full: next startLine ${shown.endLine + 1}` : "";
    const summary = `lines ${shown.startLine}-${shown.endLine} of ${totalLines} (chars ${shown.start}-${shown.end} of ${original.length})${more}`;
    return { body: shown.text, summary, slices: [{ startLine: shown.startLine, endLine: shown.endLine, start: shown.start, end: shown.end, bodyStart: headerChars(summary) }], totalLines };
  }

  const re = compilePattern(req.pattern);
  if ("error" in re) return re;
  const context = req.context ?? DEFAULT_CONTEXT_LINES;
  const { matched, slices } = matchingSlices(original, re, context, range.startLine, range.endLine);
  const within = req.startLine !== undefined || req.endLine !== undefined ? ` within lines ${range.startLine}-${range.endLine}` : "";
  if (matched.length === 0) {
    const summary = `no line matches /${req.pattern}/${within} of ${totalLines} lines; recall without pattern for the whole output`;
    return { body: "", summary, slices: [], totalLines, matches: 0 };
  }
  const parts: string[] = [];
  const shown: Array<{ s: LineSlice; at: number }> = [];
  let used = 0;
  let nextLine: number | undefined;
  for (const s of slices) {
    const label = `@@ lines ${s.startLine}-${s.endLine} @@\n`;
    const room = limit - used - label.length;
    const piece = shown.length === 0 ? fit(s, Math.max(1, room)) : s;
    if (shown.length > 0 && label.length + piece.text.length > limit - used) {
      nextLine = s.startLine;
      break;
    }
    const finalLabel = `@@ lines ${piece.startLine}-${piece.endLine} @@\n`;
    const at = parts.reduce((n, p) => n + p.length + 1, 0) + finalLabel.length;
    parts.push(finalLabel + piece.text);
    shown.push({ s: piece, at });
    used += finalLabel.length + piece.text.length + 1;
    if (piece.endLine < s.endLine) {
      nextLine = piece.endLine + 1;
      break;
    }
  }
  const more = nextLine !== undefined ? `; page full: more from line ${nextLine} (recall with startLine=${nextLine} and the same pattern)` : "";
  const summary = `${matched.length} line(s) match /${req.pattern}/${within} of ${totalLines} lines, ${context} line(s) of context${more}`;
  const head = headerChars(summary);
  return {
    body: parts.join("\n"),
    summary,
    slices: shown.map(({ s, at }) => ({ startLine: s.startLine, endLine: s.endLine, start: s.start, end: s.end, bodyStart: head + at })),
    totalLines,
    matches: matched.length,
  };
}
