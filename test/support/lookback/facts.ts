/**
 * The facts a looking-back agent comes back for, as the lookback sandbox records them: each is a
 * verbatim piece of one file or report line (so it is in any output that shows that line), with
 * the word a model would search for to find it again.
 */

export type FactKind = "definition" | "code" | "test-failure" | "error" | "config";

export const FACT_KINDS: readonly FactKind[] = ["definition", "code", "test-failure", "error", "config"];

export interface Fact {
  kind: FactKind;
  /** The exact text the model needs (a substring of one line of the output). */
  text: string;
  /** What a model would search for to find the line again (a substring of `text`). */
  cue: string;
}

/** A fact at a 1-based line of a file (or of a report). */
export interface LineFact extends Fact {
  line: number;
}

/** Lines of a text without the trailing empty line of a final newline. */
export function linesOf(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** How many times `needle` occurs in `haystack` (overlaps not counted). */
export function occurrences(haystack: string, needle: string): number {
  if (needle === "") return 0;
  let n = 0;
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}
