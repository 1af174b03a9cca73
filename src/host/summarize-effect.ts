/**
 * Edge: turn captured batches into summaries — through the user's model (pi-ai via Pi's
 * model registry, so the user's auth applies) or deterministically. Never throws: the
 * model summarizer falls back to the extractive summary per batch.
 *
 * Which batches go to the model is the engine's rule (`summaryRoutes`,
 * src/engine/summary-choice.ts), shared with the replay.
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { KeeperSettings } from "../settings/schema.ts";
import type { BatchSummary, ToolBatch } from "../summarize/batch.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { batchContentHash, summarizeBatches, type SummaryProgress } from "../summarize/model-summarizer.ts";
import { summaryRoutes, type RequestFacts } from "../engine/index.ts";

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


export async function summarizeForFlush(options: SummarizeEffectOptions): Promise<BatchSummary[]> {
  const { ctx, settings, batches } = options;
  if (batches.length === 0) return [];
  // The engine's one rule (src/engine/summary-choice.ts); a cached identical batch is free.
  const mask = summaryRoutes({ settings, batches, requestFacts: options.requestFacts, cached: (b) => options.cache.has(batchContentHash(b)) });
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
