/**
 * The summarizer effect of a fuzzed flush, with faults injected into the model stream.
 * The real `summarizeBatches` (timeouts, fallback, fidelity repair) runs over a fake
 * `streamSimple`; timers are compressed (every timeout fires on the next macrotask), so a
 * hung stream costs nothing while a stream that answers in microtasks always wins.
 */
import { estimateRequestHorizon } from "../../src/discipline/request-horizon.ts";
import type { KeeperSettings } from "../../src/settings/schema.ts";
import type { BatchSummary, ToolBatch } from "../../src/summarize/batch.ts";
import { summarizeExtractively } from "../../src/summarize/extractive.ts";
import { batchContentHash, summarizeBatches } from "../../src/summarize/model-summarizer.ts";
import type { SummaryStream } from "../../src/summarize/summary-call.ts";
import type { Timers } from "../../src/summarize/stream-watchdog.ts";
import { chooseSummarySourceForBatch } from "../../src/summarize/summary-choice.ts";

/** How the model answers a flush's summary calls. */
export const SUMMARY_FAULTS = ["ok", "error", "empty", "hang", "partial", "throw", "length"] as const;
export type SummaryFault = (typeof SUMMARY_FAULTS)[number];

const compressedTimers: Timers = {
  setTimeout: (callback) => globalThis.setTimeout(callback, 0),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

const USAGE = { input: 120, output: 30, cacheRead: 0, cacheWrite: 0, totalTokens: 150, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 } };

function fakeStream(fault: SummaryFault, prompt: string): SummaryStream {
  const never = new Promise<never>(() => {});
  const text = fault === "empty" ? "" : `Summary (${prompt.length} chars of outputs): files read, commands run.`;
  const events = fault === "partial" ? 2 : 3;
  return {
    [Symbol.asyncIterator]() {
      let sent = 0;
      return {
        next: async () => {
          if (fault === "hang") return never;
          if (sent < events) return { done: false, value: { type: sent++ === 0 ? "start" : "text_delta" } };
          if (fault === "partial") throw new Error("stream closed mid-answer");
          return { done: true, value: undefined };
        },
        return: async () => ({ done: true, value: undefined }),
      };
    },
    result: async () => {
      if (fault === "hang") return never;
      if (fault === "error") return { content: [], stopReason: "error", errorMessage: "overloaded_error", usage: USAGE };
      return { content: [{ type: "text", text }], stopReason: fault === "length" ? "length" : "stop", usage: USAGE };
    },
  };
}

export interface SummarizeOptions {
  settings: KeeperSettings;
  fault: SummaryFault;
  /** Send times of the requests so far (for `auto`). */
  requestTimes: readonly number[];
  ttlMs: number;
  /** Summaries by content hash, kept for the life of one runtime (lost on restart). */
  cache: Map<string, BatchSummary>;
}

/** Whether each batch goes to the model, as `summarizer.mode` decides it live. */
function modelMask(batches: readonly ToolBatch[], o: SummarizeOptions): boolean[] {
  const mode = o.settings.summarizer.mode;
  if (mode === "extractive") return batches.map(() => false);
  if (mode === "model") return batches.map(() => true);
  const n = estimateRequestHorizon({ requestTimes: o.requestTimes, ttlMs: o.ttlMs, cap: o.settings.cache.horizonCap }).expectedRequests;
  return batches.map((b) => o.cache.has(batchContentHash(b)) || chooseSummarySourceForBatch(b, { expectedRequests: n }).source === "model");
}

export async function summarizeWithFault(batches: readonly ToolBatch[], o: SummarizeOptions): Promise<BatchSummary[]> {
  if (batches.length === 0) return [];
  const mask = modelMask(batches, o);
  const toModel = batches.filter((_, i) => mask[i]);
  if (toModel.length === 0) return batches.map((b) => summarizeExtractively(b));
  const fromModel = await summarizeBatches({
    batches: toModel,
    complete: (_model, context) => {
      if (o.fault === "throw") throw new Error("no API key for the summarizer model");
      const first = context.messages[0];
      const prompt = first && Array.isArray(first.content) ? first.content.map((c) => (c.type === "text" ? c.text : "")).join("") : "";
      return fakeStream(o.fault, prompt);
    },
    model: "fuzz-summarizer",
    timeouts: { idleMs: o.settings.summarizer.idleTimeoutMs, ceilingMs: o.settings.summarizer.ceilingTimeoutMs },
    timers: compressedTimers,
    trivialChars: o.settings.pruning.minBatchChars,
    cache: o.cache,
  });
  // Every failure must fall back to the extractive summary, and only a failure may.
  const failing = o.fault !== "ok" && o.fault !== "length";
  for (const s of fromModel) {
    if (s.skippedTrivial || s.aliasOf !== undefined) continue;
    if (failing && (s.fallbackReason === undefined || s.source === "model")) throw new Error(`summarizer fault "${o.fault}" did not fall back (batch ${s.batchKey})`);
    if (!failing && s.fallbackReason !== undefined) throw new Error(`a healthy summarizer fell back (${s.fallbackReason}) on batch ${s.batchKey}`);
    if (s.source !== "raw" && s.text.trim() === "") throw new Error(`empty summary for batch ${s.batchKey} under fault "${o.fault}"`);
  }
  let next = 0;
  return batches.map((b, i) => (mask[i] ? fromModel[next++] : summarizeExtractively(b)));
}
