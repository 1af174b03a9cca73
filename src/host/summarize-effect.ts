/**
 * Edge: turn captured batches into summaries — through the user's model (pi-ai via Pi's
 * model registry, so the user's auth applies) or deterministically. Never throws: the
 * model summarizer falls back to the extractive summary per batch.
 *
 * Which batches go to the model is the engine's decision: the `summarize` effect carries the
 * routes (the replay follows the same effect).
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { KeeperSettings } from "../settings/schema.ts";
import type { BatchSummary, ToolBatch } from "../summarize/batch.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { summarizeBatches, type SummaryProgress } from "../summarize/model-summarizer.ts";
import { sentUsageEstimate } from "../summarize/summary-call.ts";

export interface SummarizeEffectOptions {
  ctx: ExtensionContext;
  settings: KeeperSettings;
  batches: readonly ToolBatch[];
  /** Per batch: true = the model summarizer (the `summarize` effect's routes). */
  routes: readonly boolean[];
  cache: Map<string, BatchSummary>;
  signal: AbortSignal;
  onProgress: (progress: SummaryProgress) => void;
  /** Called when a configured summarizer model cannot be found. */
  onNotice: (text: string) => void;
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
  const mask = options.routes;
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
    // A call stopped (shutdown, timeout) before the provider reported usage still cost what was sent.
    sentEstimate: (context) => sentUsageEstimate(context, model.cost?.input ?? 0),
  });
  let next = 0;
  return batches.map((b, i) => (mask[i] ? fromModel[next++] : summarizeExtractively(b)));
}
