/**
 * The threshold scenario of the async-compaction wire tests (`test/e2e/compaction-threshold.test.ts`):
 * a 110k-token window, Pi's default reserve (16,384) and keep (20,000), 2 s summaries, and two
 * prompts — a short one (6 reads), then a long tool loop (70 reads) that crosses Pi's threshold
 * (93,616 tokens) more than once. Each read adds ~2,394 tokens (see `WIRE_SETUP` in e2e-wire.ts).
 * With the first prompt in the history, Pi's summary of a cut inside the second prompt is two
 * sequential model calls (history + turn prefix): ~4 s for bare Pi.
 */
import type { MainStep, RecordedRequest } from "../fake-anthropic/index.ts";
import { thinkingOf } from "./e2e-wire.ts";

export const THRESHOLD_SETUP = {
  model: { contextWindow: 110_000 },
  settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 } },
  contextKeeper: { pruning: { enabled: false }, thinkingStrip: { mode: "off" } },
  startRatio: "0.5",
};
export const FILES = 20;
export const FIRST_READS = 6;
export const SECOND_READS = 70;

/** Steps of one prompt: `reads` reads of the sandbox files in turn (each step thinking about `thinkingChars`), then a text answer. */
function promptSteps(reads: number, offset: number, delayMs: number, label: string, thinkingChars = 0): MainStep[] {
  const steps: MainStep[] = Array.from({ length: reads }, (_, k) => ({
    thinking: thinkingOf(`${label} step ${k}`, thinkingChars),
    toolCalls: [{ name: "read", input: { path: `data/f${String((offset + k) % FILES).padStart(2, "0")}.txt` } }],
    delayMs,
  }));
  steps.push({ thinking: `${label}: all files read.`, text: `${label} done.`, delayMs });
  return steps;
}

export const PROMPTS = ["Read the first data files.", "Now read the data files again, one by one."];

/**
 * `loopThinkingChars`: the long loop's steps think that much (the current loop's thinking goes
 * back untouched, so with pruning on that loop still needs compactions).
 */
export function thresholdScript(delayMs: number, loopThinkingChars = 0): MainStep[] {
  return [...promptSteps(FIRST_READS, 0, delayMs, "first"), ...promptSteps(SECOND_READS, FIRST_READS, delayMs, "second", loopThinkingChars)];
}

/** Main requests of the second prompt (the long tool loop), in order. */
export function loopRequests(main: RecordedRequest[]): RecordedRequest[] {
  return main.slice(FIRST_READS + 1);
}

/**
 * The longest in-loop stall: over consecutive main requests of the tool loop, the gap minus the
 * scripted answer delay, minus the loop's usual overhead (the median of the same figure).
 */
export function longestStall(loop: RecordedRequest[], delayMs: number): { stallMs: number; atRequest: number; overheadMs: number } {
  const excess = loop.slice(1).map((r, i) => r.arrivedAtMs - loop[i].arrivedAtMs - delayMs);
  const sorted = [...excess].sort((a, b) => a - b);
  const overheadMs = sorted[Math.floor(sorted.length / 2)] ?? 0;
  let atRequest = 0;
  for (let i = 1; i < excess.length; i++) if (excess[i] > excess[atRequest]) atRequest = i;
  return { stallMs: (excess[atRequest] ?? 0) - overheadMs, atRequest: atRequest + 1, overheadMs };
}

/** USD of every request on the wire (main, summaries, aborted ones), at the fake model's Sonnet-like prices. */
export function wireCost(requests: RecordedRequest[]): number {
  const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
  let usd = 0;
  for (const r of requests) {
    const u = r.response?.usage;
    if (!u) continue;
    usd += (u.input_tokens * price.input + (u.output_tokens ?? 0) * price.output + (u.cache_read_input_tokens ?? 0) * price.cacheRead + (u.cache_creation_input_tokens ?? 0) * price.cacheWrite) / 1e6;
  }
  return usd;
}

/** Token totals of the main requests (where the cache matters). */
export function mainUsage(main: RecordedRequest[]): { input: number; cacheRead: number; cacheWrite: number; output: number } {
  const t = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  for (const r of main) {
    const u = r.response?.usage;
    if (!u) continue;
    t.input += u.input_tokens;
    t.cacheRead += u.cache_read_input_tokens ?? 0;
    t.cacheWrite += u.cache_creation_input_tokens ?? 0;
    t.output += u.output_tokens ?? 0;
  }
  return t;
}

/** Indices of main requests that lost most of the cached prefix the request before had written or read. */
export function bustIndices(main: RecordedRequest[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < main.length; i++) {
    const prev = main[i - 1].response?.usage;
    const cur = main[i].response?.usage;
    if (!prev || !cur) continue;
    const prevPrompt = prev.input_tokens + (prev.cache_read_input_tokens ?? 0) + (prev.cache_creation_input_tokens ?? 0);
    if ((cur.cache_read_input_tokens ?? 0) < 0.5 * prevPrompt) out.push(i);
  }
  return out;
}
