/**
 * Edge: turn captured batches into summaries — through the user's model (pi-ai via Pi's
 * model registry, so the user's auth applies) or deterministically. Never throws: the
 * model summarizer falls back to the extractive summary per batch.
 *
 * `summarizer.mode`: `model` sends every batch to the model, `extractive` none, `auto` only
 * the batches whose pruning repays the call (src/summarize/summary-choice.ts) over the
 * requests expected to read them (the cache discipline's request horizon). Without request
 * facts `auto` is conservative: no model call.
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { estimateRequestHorizon } from "../discipline/request-horizon.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { BatchSummary, ToolBatch } from "../summarize/batch.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { batchContentHash, summarizeBatches, type SummaryProgress } from "../summarize/model-summarizer.ts";
import { chooseSummarySourceForBatch } from "../summarize/summary-choice.ts";

/** What the cache runtime saw of this session's requests (a subset of `DisciplineFacts`). */
export interface RequestFacts {
  requestTimes: readonly number[];
  ttlMs: number;
  horizonCap?: number;
}

export interface SummarizeEffectOptions {
  ctx: ExtensionContext;
  settings: KeeperSettings;
  batches: readonly ToolBatch[];
  cache: Map<string, BatchSummary>;
  signal: AbortSignal;
  onProgress: (progress: SummaryProgress) => void;
  /** Called once when a configured summarizer model cannot be found. */
  onNotice: (text: string) => void;
  /** For `auto`: the requests seen so far. Absent: every batch is summarized extractively. */
  requestFacts?: RequestFacts;
}

/** `provider/model-id` → the model; "" → the session model. */
export function resolveSummarizerModel(ctx: ExtensionContext, configured: string): { model?: Model<Api>; notice?: string } {
  if (!configured) return { model: ctx.model };
  const slash = configured.indexOf("/");
  const found = slash > 0 ? ctx.modelRegistry.find(configured.slice(0, slash), configured.slice(slash + 1)) : undefined;
  if (found) return { model: found };
  return {
    model: ctx.model,
    notice: `context-keeper: summarizer.model "${configured}" was not found (expected provider/model-id); using the session model`,
  };
}

/** N of summary-choice.ts: the request about to be sent plus the warm reads expected after it. */
export function expectedRequestsOf(facts: RequestFacts | undefined, settings: KeeperSettings): number | undefined {
  if (!facts) return undefined;
  return estimateRequestHorizon({ requestTimes: facts.requestTimes, ttlMs: facts.ttlMs, cap: facts.horizonCap ?? settings.cache.horizonCap }).expectedRequests;
}

/** Whether each batch goes to the model (input order). A cached identical batch is free, so it always does. */
export function modelBatchMask(options: Pick<SummarizeEffectOptions, "settings" | "batches" | "cache" | "requestFacts">): boolean[] {
  const mode = options.settings.summarizer.mode;
  if (mode === "extractive") return options.batches.map(() => false);
  if (mode === "model") return options.batches.map(() => true);
  const n = expectedRequestsOf(options.requestFacts, options.settings);
  return options.batches.map(
    (b) => options.cache.has(batchContentHash(b)) || (n !== undefined && chooseSummarySourceForBatch(b, { expectedRequests: n }).source === "model"),
  );
}

export async function summarizeForFlush(options: SummarizeEffectOptions): Promise<BatchSummary[]> {
  const { ctx, settings, batches } = options;
  if (batches.length === 0) return [];
  const mask = modelBatchMask(options);
  const toModel = batches.filter((_, i) => mask[i]);
  const extractive = () => batches.map((b) => summarizeExtractively(b));
  if (toModel.length === 0) return extractive();
  const { model, notice } = resolveSummarizerModel(ctx, settings.summarizer.model);
  if (notice) options.onNotice(notice);
  if (!model) return extractive();
  const fromModel = await summarizeBatches({
    batches: toModel,
    complete: (m, context, callOptions) => ctx.modelRegistry.streamSimple(m, context, callOptions),
    model,
    timeouts: { idleMs: settings.summarizer.idleTimeoutMs, ceilingMs: settings.summarizer.ceilingTimeoutMs },
    onProgress: options.onProgress,
    signal: options.signal,
    trivialChars: settings.pruning.minBatchChars,
    cache: options.cache,
  });
  let next = 0;
  return batches.map((b, i) => (mask[i] ? fromModel[next++] : summarizeExtractively(b)));
}
