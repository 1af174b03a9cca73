/**
 * The recording wins over the price list: when a session's recorded usage shows no cache
 * writes at all for a model whose rule bills them (Anthropic's marks, or a registry price for
 * writes), that provider reported and billed the newly cached part as plain input, and the
 * replay does the same for the model (`writesReported: false`, no write premium); when it
 * shows no cache use at all (no read, no write), the provider cached nothing, and the model is
 * replayed without a prompt cache. Either way the report says so (`note`).
 *
 * Only a model with at least `MIN_EVIDENCE` billed requests at or above its cacheable minimum
 * is judged: a short session that never reached it says nothing about the provider.
 */
import type { CacheRule, ModelRef } from "../cache/cache-rules.ts";
import { pricingOf, type CostModel } from "../cache/cost-model.ts";
import type { RecordedUsage } from "./calibration.ts";

export const MIN_EVIDENCE = 3;

export interface RecordedCacheUse {
  /** Recorded prompt sizes (input + read + write) of the model's billed requests. */
  prompts: number[];
  read: number;
  write: number;
}

export const modelKey = (ref: ModelRef) => `${ref.provider}\u0000${ref.api}\u0000${ref.model}`;

/** Each model's recorded cache use, over its billed requests. */
export function recordedCacheUse(requests: ReadonlyArray<{ ref: ModelRef; recorded: RecordedUsage }>): Map<string, RecordedCacheUse> {
  const out = new Map<string, RecordedCacheUse>();
  for (const { ref, recorded } of requests) {
    const prompt = recorded.input + recorded.cacheRead + recorded.cacheWrite;
    if (prompt <= 0) continue;
    const key = modelKey(ref);
    const use = out.get(key) ?? { prompts: [], read: 0, write: 0 };
    use.prompts.push(prompt);
    use.read += recorded.cacheRead;
    use.write += recorded.cacheWrite;
    out.set(key, use);
  }
  return out;
}

export interface AsRecorded {
  costModel: CostModel;
  /** What the recording changed, in a sentence for the report; absent when nothing. */
  note?: string;
}

/** The model's cost model as its recording shows the provider behaved. */
export function costModelAsRecorded(model: CostModel, use: RecordedCacheUse | undefined): AsRecorded {
  const rule = model.rule;
  if (!use || use.write > 0) return { costModel: model };
  const evidence = use.prompts.filter((p) => p >= rule.minCacheableTokens).length;
  if (evidence < MIN_EVIDENCE) return { costModel: model };
  const id = model.ref.model;
  if (use.read === 0) {
    const none: CacheRule = { ...rule, minCacheableTokens: Number.POSITIVE_INFINITY, writePremium: false, writesReported: false, label: `${rule.label}; no cache use in the recording: replayed without a prompt cache` };
    return {
      costModel: { ...model, rule: none, pricing: pricingOf(model.prices.rates, none) },
      note: `${id}: the recording shows no cache reads or writes in ${use.prompts.length} requests (${evidence} long enough to cache): replayed without a prompt cache, as recorded`,
    };
  }
  const billsWrites = rule.writePremium || rule.mechanism === "explicit-marks";
  if (!billsWrites) return { costModel: model };
  const asInput: CacheRule = { ...rule, writePremium: false, writesReported: false, label: `${rule.label}; no cache writes in the recording: written tokens counted as plain input` };
  const listed = model.prices.rates.cacheWrite > 0 ? ` although ${model.prices.source === "registry" ? "the registry" : "the fallback table"} prices them at $${model.prices.rates.cacheWrite} per M` : "";
  return {
    costModel: { ...model, rule: asInput, pricing: pricingOf(model.prices.rates, asInput) },
    note: `${id}: the recording shows cache reads but no cache writes in ${use.prompts.length} requests${listed}: newly cached tokens counted as plain input, as recorded`,
  };
}
