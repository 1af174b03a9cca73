/**
 * Which captured batches go to the model summarizer: the one copy of the `summarizer.mode`
 * rule, for the live host and the replay alike.
 *
 * `model` sends every batch, `extractive` none, `auto` only the batches whose pruning repays
 * the call (src/summarize/summary-choice.ts) over the requests expected to read them (the
 * cache discipline's request horizon), priced in the session model's units. Without request facts `auto` is conservative: no call.
 * A batch whose summary is already cached costs nothing, so it always takes the model's.
 */
import { estimateRequestHorizon } from "../discipline/request-horizon.ts";
import type { CachePricing } from "../cache/pricing.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { ToolBatch } from "../summarize/batch.ts";
import { chooseSummarySourceForBatch } from "../summarize/summary-choice.ts";

/** What the engine saw of this session's requests (a subset of `DisciplineFacts`). */
export interface RequestFacts {
  requestTimes: readonly number[];
  ttlMs: number;
  horizonCap?: number;
  /** The session model's prices: the summarizer call and the saved reads in its units (default: Anthropic's). */
  costModel?: { pricing: CachePricing };
}

/** N of summary-choice.ts: the request about to be sent plus the warm reads expected after it. */
export function expectedRequestsOf(facts: RequestFacts | undefined, settings: KeeperSettings): number | undefined {
  if (!facts) return undefined;
  return estimateRequestHorizon({ requestTimes: facts.requestTimes, ttlMs: facts.ttlMs, cap: facts.horizonCap ?? settings.cache.horizonCap }).expectedRequests;
}

export interface SummaryRoutesInput {
  settings: KeeperSettings;
  batches: readonly ToolBatch[];
  requestFacts: RequestFacts | undefined;
  /** Whether a batch's model summary is already cached (free). Default: never. */
  cached?: (batch: ToolBatch) => boolean;
}

/** Per batch (input order): true = the model summarizer, false = the extractive one. */
export function summaryRoutes(input: SummaryRoutesInput): boolean[] {
  const mode = input.settings.summarizer.mode;
  if (mode === "extractive") return input.batches.map(() => false);
  if (mode === "model") return input.batches.map(() => true);
  const n = expectedRequestsOf(input.requestFacts, input.settings);
  const pricing = input.requestFacts?.costModel?.pricing;
  return input.batches.map(
    (b) => (input.cached?.(b) ?? false) || (n !== undefined && chooseSummarySourceForBatch(b, { expectedRequests: n, ...(pricing ? { pricing } : {}) }).source === "model"),
  );
}
