/**
 * Summarize finished tool batches with a model, never leaving a batch stranded: every
 * failure (timeout, error result, empty answer, hang, abort) falls back to the extractive
 * summary of that batch. Identical batches are summarized once. A model summary that
 * dropped a path, command, exit code or error line gets them appended verbatim.
 */
import type { Context } from "@earendil-works/pi-ai";
import type { BatchSummary, ToolBatch } from "./batch.ts";
import { type ExtractiveOptions, keepRawWhenLonger, rawLength, summarizeExtractively } from "./extractive.ts";
import { countMissing, findMissingFacts } from "./fidelity.ts";
import { type StreamSummaryCall, type SummaryFailureReason, type CallUsage, runSummaryCall } from "./summary-call.ts";
import { SUMMARY_SYSTEM_PROMPT, type PromptOptions, appendMissingFacts, buildSummaryPrompt } from "./summary-prompt.ts";
import { type Timers, realTimers } from "./stream-watchdog.ts";
import { sha256Hex } from "./text-measure.ts";

export interface SummaryProgress {
  done: number;
  total: number;
  /** `summarizing 2/5 batches…`, ready for a status line. */
  label: string;
}

/** A BatchSummary plus how it was obtained (extra fields; the shared contract is a subset). */
export interface SummarizedBatch extends BatchSummary {
  /** sha256 over the batch's tool names, arguments, error flags and result texts. */
  contentHash: string;
  /** Set when this batch reused the summary of an identical batch (usage then 0). */
  aliasOf?: string;
  /** True when the batch was below the trivial threshold and left raw without a call. */
  skippedTrivial: boolean;
  /** Why the model summary was not used (the text is then the extractive one). */
  fallbackReason?: SummaryFailureReason;
  fallbackDetail?: string;
  /**
   * Usage of a failed model attempt (an error, an empty answer, a call stopped by a timeout or
   * an abort): the fallback's `inputTokens`, `outputTokens` and `cost` carry it too, so the
   * flush counts what the attempt was billed (`stats.summarizerCost`).
   */
  failedAttemptUsage?: CallUsage;
  /** Facts the model dropped that were appended verbatim. */
  repairedFacts: number;
  /** Model stopped at its token limit (the repair still guarantees the facts). */
  truncated: boolean;
  durationMs: number;
}

export interface SummarizeBatchesOptions<TModel> {
  batches: readonly ToolBatch[];
  /** Streaming model call; `ctx.modelRegistry.streamSimple` fits as is. */
  complete: StreamSummaryCall<TModel>;
  model: TModel;
  timeouts: { idleMs: number; ceilingMs: number };
  onProgress?: (progress: SummaryProgress) => void;
  signal?: AbortSignal;
  now?: () => number;
  timers?: Timers;
  /** Batches whose result texts total fewer characters stay raw, no call. Default 1024. */
  trivialChars?: number;
  /** Calls in flight at once. Default 2. */
  concurrency?: number;
  /** Output token cap of a summary call. Default 2048. */
  maxTokens?: number;
  /** What a call stopped before the provider reported usage is taken to cost (summary-call.ts). */
  sentEstimate?: (context: Context) => CallUsage;
  /** Summaries by content hash, read and filled: aliasing across flushes. */
  cache?: Map<string, BatchSummary>;
  extractive?: ExtractiveOptions;
  prompt?: PromptOptions;
}

export function formatSummaryProgress(done: number, total: number): string {
  return `summarizing ${done}/${total} batches…`;
}

export function batchContentHash(batch: ToolBatch): string {
  return sha256Hex(JSON.stringify(batch.calls.map((c) => [c.toolName, c.arguments, c.isError, c.resultText])));
}

function extractiveFallback(batch: ToolBatch, options: ExtractiveOptions | undefined): BatchSummary {
  return summarizeExtractively(batch, options);
}

async function summarizeOne<TModel>(batch: ToolBatch, o: SummarizeBatchesOptions<TModel>, now: () => number): Promise<Omit<SummarizedBatch, "contentHash" | "skippedTrivial">> {
  const started = now();
  const outcome = await runSummaryCall({
    call: o.complete,
    model: o.model,
    context: {
      systemPrompt: SUMMARY_SYSTEM_PROMPT,
      messages: [{ role: "user", content: [{ type: "text", text: buildSummaryPrompt(batch, o.prompt) }], timestamp: started }],
    },
    maxTokens: o.maxTokens ?? 2048,
    idleMs: o.timeouts.idleMs,
    ceilingMs: o.timeouts.ceilingMs,
    timers: o.timers ?? realTimers,
    signal: o.signal,
    ...(o.sentEstimate ? { sentEstimate: o.sentEstimate } : {}),
  });
  const durationMs = now() - started;
  if (!outcome.ok) {
    const spent = outcome.usage ?? { inputTokens: 0, outputTokens: 0, cost: 0 };
    return {
      ...extractiveFallback(batch, o.extractive),
      inputTokens: spent.inputTokens,
      outputTokens: spent.outputTokens,
      cost: spent.cost,
      fallbackReason: outcome.reason,
      fallbackDetail: outcome.detail,
      failedAttemptUsage: outcome.usage,
      repairedFacts: 0,
      truncated: false,
      durationMs,
    };
  }
  const missing = findMissingFacts(batch, outcome.text);
  const summary = keepRawWhenLonger(batch, {
    batchKey: batch.batchKey,
    text: appendMissingFacts(outcome.text, missing),
    source: "model",
    ...outcome.usage,
  });
  return { ...summary, repairedFacts: countMissing(missing), truncated: outcome.truncated, durationMs };
}

async function runPool<T>(items: readonly T[], limit: number, worker: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      await worker(item);
    }
  });
  await Promise.all(lanes);
}

/** One result per input batch, in input order. Resolves even when every call fails or hangs. */
export async function summarizeBatches<TModel>(options: SummarizeBatchesOptions<TModel>): Promise<SummarizedBatch[]> {
  const now = options.now ?? Date.now;
  const trivialChars = options.trivialChars ?? 1024;
  const hashes = options.batches.map(batchContentHash);
  const results: (SummarizedBatch | undefined)[] = new Array(options.batches.length);
  const leaders = new Map<string, number>(); // content hash -> index of the batch that is summarized

  options.batches.forEach((batch, i) => {
    const contentHash = hashes[i];
    if (rawLength(batch) < trivialChars) {
      results[i] = { batchKey: batch.batchKey, text: "", source: "raw", inputTokens: 0, outputTokens: 0, cost: 0, contentHash, skippedTrivial: true, repairedFacts: 0, truncated: false, durationMs: 0 };
      return;
    }
    const cached = options.cache?.get(contentHash);
    if (cached) {
      results[i] = { ...cached, batchKey: batch.batchKey, inputTokens: 0, outputTokens: 0, cost: 0, contentHash, aliasOf: cached.batchKey, skippedTrivial: false, repairedFacts: 0, truncated: false, durationMs: 0 };
      return;
    }
    if (!leaders.has(contentHash)) leaders.set(contentHash, i);
  });

  const work = [...leaders.values()];
  let done = 0;
  const report = () => options.onProgress?.({ done, total: work.length, label: formatSummaryProgress(done, work.length) });
  if (work.length > 0) report();

  await runPool(work, options.concurrency ?? 2, async (i) => {
    const batch = options.batches[i];
    const summary = await summarizeOne(batch, options, now);
    results[i] = { ...summary, contentHash: hashes[i], skippedTrivial: false };
    // Only model summaries are worth caching; a fallback may succeed with the model next time.
    if (summary.source === "model") options.cache?.set(hashes[i], { batchKey: summary.batchKey, text: summary.text, source: summary.source, inputTokens: summary.inputTokens, outputTokens: summary.outputTokens, cost: summary.cost });
    done++;
    report();
  });

  return options.batches.map((batch, i) => {
    const own = results[i];
    if (own) return own;
    const leader = results[leaders.get(hashes[i]) ?? -1];
    if (!leader) throw new Error(`no summary for batch ${batch.batchKey}`); // unreachable: every leader ran
    return { ...leader, batchKey: batch.batchKey, aliasOf: leader.batchKey, inputTokens: 0, outputTokens: 0, cost: 0, failedAttemptUsage: undefined, durationMs: 0 };
  });
}
