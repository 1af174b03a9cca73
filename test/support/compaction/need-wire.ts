/**
 * The "compaction waits for need" scenario (`test/e2e/compaction-need.test.ts`, issue #22's
 * 110k case): a 110k-token window, Pi's default reserve (16,384) and keep (20,000), the keeper's
 * defaults (pruning on, START_RATIO 0.8, adaptive start), fast answers and fast summaries, and
 * five prompts over a sandbox of 84 files of ~2,394 tokens a read (each read once):
 * three of 12 reads, a long loop of 45 reads, then 3 reads.
 *
 * Bare Pi crosses its threshold (93,616) early in the fourth prompt and again inside it. The
 * keeper's chains keep the carried history small, so its context passes the adaptive start's
 * floor (36,384) inside a short prompt; with a summary that takes 100 ms the job is ready a few
 * turns later, far below Pi's threshold — where it used to be applied at once. Only the long
 * loop needs a compaction: its context reaches the threshold inside the loop, and the loop's
 * steps kept after the compaction must still collapse into its chain at the next prompt.
 */
import type { MainStep, RecordedRequest, SideRouter } from "../fake-anthropic/index.ts";
import { PI_SUMMARIZATION_PROMPT_START, systemText } from "../fake-anthropic/index.ts";
import { summaryText, thinkingOf } from "./e2e-wire.ts";

export const NEED_SETUP = {
  model: { contextWindow: 110_000 },
  settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 } },
};
export const NEED_FILES = 84;
export const THRESHOLD_TOKENS = NEED_SETUP.model.contextWindow - NEED_SETUP.settings.compaction.reserveTokens;
/** Reads per prompt; the fourth is the long loop. */
export const READS = [12, 12, 12, 45, 3];
export const LONG_PROMPT = 3;
export const NEED_PROMPTS = READS.map((n, i) => `Task ${i + 1}: read the next ${n} data files, one by one.`);
export const SUMMARY_MS = 100;

/** Pi's compaction prompt is answered after `SUMMARY_MS`. */
export const fastSummaryRouter: SideRouter = ({ request, kindIndex }) =>
  systemText(request.body).includes(PI_SUMMARIZATION_PROMPT_START) ? { text: summaryText(kindIndex), delayMs: SUMMARY_MS } : { text: `side answer #${kindIndex}` };

/**
 * The script: each read step, then the prompt's answer. `longThinkingChars`: the long loop's
 * steps think that much (the current loop's thinking goes back untouched, so no flush shrinks
 * it and that loop needs a compaction even with pruning on).
 */
export function needScript(options: { delayMs?: number; longThinkingChars?: number } = {}): MainStep[] {
  const delayMs = options.delayMs ?? 0;
  let file = 0;
  return READS.flatMap((reads, p) => [
    ...Array.from({ length: reads }, (_, k): MainStep => ({
      thinking: thinkingOf(`Task ${p + 1} step ${k}`, p === LONG_PROMPT ? (options.longThinkingChars ?? 0) : 0),
      toolCalls: [{ name: "read", input: { path: `data/f${String(file++ % NEED_FILES).padStart(2, "0")}.txt` } }],
      delayMs,
    })),
    { thinking: `Task ${p + 1}: all files read.`, text: `Task ${p + 1} done: ${reads} files read.`, delayMs },
  ]);
}

/** Main requests of prompt `p` (each prompt asks once per read and once for its answer). */
export function promptRequests(main: RecordedRequest[], p: number): RecordedRequest[] {
  const from = READS.slice(0, p).reduce((n, r) => n + r + 1, 0);
  return main.slice(from, from + READS[p] + 1);
}

/** Tool results a request carries, raw or stubbed. */
export function toolResultIds(r: RecordedRequest): string[] {
  return r.body.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content.flatMap((b) => (b.type === "tool_result" && b.tool_use_id ? [b.tool_use_id] : []))));
}

/** The tool calls the server answered in these requests (their ids), in order. */
export function toolCallIds(requests: RecordedRequest[]): string[] {
  return requests.flatMap((r) => (r.response?.toolCalls ?? []).map((c) => c.id));
}
