/**
 * Summaries the fake server writes for summarizer calls in the wire benchmark, sized like a real
 * model's: a few hundred tokens for a 20 KB batch, not one line.
 *
 * The answer is built from the request the summarizer actually sent (what a real model sees), so
 * an extension that sends less gets a shorter summary, as it would from a real model:
 * - the input is split into calls at either label style, `[[N:tool]]` (pi-condense asks the model
 *   to start each call's bullet with it) or `[N] tool` (this project's prompt);
 * - each call gets a bullet that starts with its label, names the paths and exit codes its
 *   section shows (a real model keeps what the prompt says to keep), then sentences until it
 *   reaches `CHARS_PER_INPUT_CHAR` of the section's size, within [MIN, MAX] per call;
 * - a fuse request (several summaries into one; no call labels) gets half its input, capped.
 * Deterministic: same request → same text.
 */
import { findPaths } from "../../src/summarize/output-facts.ts";

export const CHARS_PER_INPUT_CHAR = 0.05;
export const MIN_CALL_SUMMARY_CHARS = 200;
export const MAX_CALL_SUMMARY_CHARS = 900;
const MAX_PATHS_PER_CALL = 8;
const MAX_FUSE_CHARS = 2400;

type Section = { label: string; tool: string; body: string };

const CONDENSE_LABEL = /\[\[(\d+):([\w-]+)\]\]/g;
const KEEPER_LABEL = /^\[(\d+)\] ([\w-]+)$/gm;

export function splitCalls(input: string): Section[] {
  for (const re of [CONDENSE_LABEL, KEEPER_LABEL]) {
    const hits = [...input.matchAll(re)];
    if (hits.length === 0) continue;
    return hits.map((m, i) => {
      const start = m.index! + m[0].length;
      const end = i + 1 < hits.length ? hits[i + 1].index! : input.length;
      return { label: re === CONDENSE_LABEL ? m[0] : `[${m[1]}]`, tool: m[2], body: input.slice(start, end) };
    });
  }
  return [];
}

const FILLERS = [
  "The output is consistent with the surrounding code and shows no unexpected values.",
  "Most lines repeat the same pattern; the relevant entries are listed above.",
  "Identifiers and counts match what the earlier calls reported.",
  "No follow-up is needed for this call unless the named files change.",
  "The structure is regular, so later steps can rely on the same layout.",
];

function exitCodes(body: string): string[] {
  const out = new Set<string>();
  for (const m of body.matchAll(/exit(?:ed)? (?:with )?code (-?\d+)/gi)) out.add(`exit code ${m[1]}`);
  return [...out];
}

function callSummary(s: Section, n: number): string {
  const target = Math.min(MAX_CALL_SUMMARY_CHARS, Math.max(MIN_CALL_SUMMARY_CHARS, Math.round(s.body.length * CHARS_PER_INPUT_CHAR)));
  const paths = findPaths(s.body).slice(0, MAX_PATHS_PER_CALL);
  const lines = s.body.split("\n").filter((l) => l.trim() !== "").length;
  let text = `${s.label} ${s.tool}: inspected ${lines} lines`;
  if (paths.length > 0) text += `; files: ${paths.join(", ")}`;
  const codes = exitCodes(s.body);
  if (codes.length > 0) text += `; ${codes.join(", ")}`;
  text += ".";
  for (let i = 0; text.length < target; i++) text += ` ${FILLERS[(n + i) % FILLERS.length]}`;
  return `- ${text}`;
}

/** The fake model's summary of one summarizer request's input text (`fuse`: merge earlier summaries). */
export function fakeSummaryOf(input: string, options: { fuse?: boolean } = {}): string {
  const sections = options.fuse ? [] : splitCalls(input);
  if (sections.length > 0) return sections.map((s, i) => callSummary(s, i)).join("\n");
  const target = Math.min(MAX_FUSE_CHARS, Math.max(MIN_CALL_SUMMARY_CHARS, Math.round(input.length / 2)));
  const paths = findPaths(input).slice(0, 2 * MAX_PATHS_PER_CALL);
  let text = `Combined: the steps inspected ${paths.length > 0 ? paths.join(", ") : "the project files"}.`;
  for (let i = 0; text.length < target; i++) text += ` ${FILLERS[i % FILLERS.length]}`;
  return text;
}
