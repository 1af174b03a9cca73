/**
 * The profitability gate: charge a history rewrite its cache cost before doing it.
 *
 * All prices are in units of one uncached input token of the session model, from its cost model
 * (cache/cost-model.ts; default Anthropic's: write 1.25× for the 5-minute TTL, 2× for 1 hour,
 * read 0.1×). On providers without a write premium (OpenAI, Google: automatic prefix caching)
 * the re-sent tokens cost plain input, writePrice = 1: a rewrite costs rewritten × (1 − read)
 * and a cold cache saves the removed tokens' uncached price instead of a write.
 *
 *   rewriteCost = rewrittenTokens × (writePrice − readPrice)          (0 when the cache is cold)
 *   saving      = tokensRemoved × readPrice × N + relief               (warm)
 *               = tokensRemoved × (writePrice + readPrice × (N − 1)) + relief   (cold)
 *   apply iff   saving − rewriteCost > minNetSaving
 *
 * Unannounced losses (observed-loss.ts): with chance p this request finds the entry lost anyway
 * (the rewrite is free and the removal skips a write), with chance p' each later one does (the
 * waiting tokens are written, not read):
 *   rewriteCost = (1 − p) × rewritten × (write − read)
 *   saving      = removed × ([p·write + (1 − p)·read] + (N − 1) × [p'·write + (1 − p')·read]) + relief
 * p = 1, p' = 0 is the cold formula; p = p' = 0 the warm one.
 *
 * Derivation (warm): without the change this request and N − 1 more read the prefix P. With it,
 * this request writes the T − R tokens from the first change on (T before removal) and reads the
 * rest, and the later ones read P − R. The difference is N·R·read − (T − R)·(write − read), so
 * `rewrittenTokens` is the tokens from the first change on *as they will be sent* (after removal)
 * and N counts the request about to be sent. Cold: everything is written anyway, so the rewrite is
 * free and the removed tokens also skip one write.
 *
 * reasoning (reasoning-cost.ts): on models whose reasoning is bound to its prefix, the rewrite
 * also makes the provider drop the thinking after its first change, on a cold cache too:
 *   reasoningCost = reasoningDropped × outputPrice
 *   apply iff saving − rewriteCost − reasoningCost > minNetSaving
 *
 * relief: near the context window Pi compacts, which re-sends the whole context to the summarizer
 * without cache and writes the new context (≈ contextTokens × (uncached + write)). Freeing R tokens
 * from the band between `pressureThreshold` and the window covers R / band of the way to that
 * compaction, weighted by how deep into the band usage already is:
 *   pressure = clamp((usage − threshold) / (1 − threshold), 0, 1)
 *   relief   = pressure × min(1, R / (window × (1 − threshold))) × contextTokens × compactionPricePerToken
 */
import type { CacheRule } from "../cache/cache-rules.ts";
import { DEFAULT_PRICING, type CachePricing } from "../cache/pricing.ts";
import { reasoningDropCost } from "./reasoning-cost.ts";
import type { GateDecision, GateReason } from "./schema.ts";

export type CacheTtl = "5m" | "1h";

export interface GateOptions {
  /** Usage fraction above which relief starts; default 0.7. */
  pressureThreshold: number;
  /** Price of a compaction per context token; default pricing.uncached + write price. */
  compactionPricePerToken?: number;
  /** Net saving (token units) a rewrite must beat; default 0. */
  minNetSaving: number;
}

export const DEFAULT_GATE_OPTIONS: GateOptions = { pressureThreshold: 0.7, minNetSaving: 0 };

export interface GateInput {
  tokensRemoved: number;
  /** Tokens from the first changed message to the end of the previously cached prefix, after removal. */
  rewrittenTokens: number;
  /** N: requests (this one included) expected to read the prefix (see request-horizon.ts). */
  expectedRequests: number;
  /** The cache entry is already lost (cold-cache.ts): the rewrite is free. */
  cacheCold?: boolean;
  /**
   * Chance (0..1) that this request finds the entry lost although nothing known explains it
   * (observed-loss.ts): the rewrite is then free and the removed tokens skip a write.
   */
  coldChance?: number;
  /**
   * The same chance for each later request: while a removal waits, every later request that
   * loses the cache writes the waiting tokens instead of reading them.
   */
  futureColdChance?: number;
  ttl?: CacheTtl;
  pricing?: CachePricing;
  /**
   * The session model's cost model (its prices and cache rule): wins over `pricing`, and its
   * rule is named in the decision for `/keeper why`.
   */
  costModel?: { pricing: CachePricing; rule: Pick<CacheRule, "label" | "writePremium"> };
  /** Current context size and window, for relief. */
  context?: { tokens: number; window: number };
  /**
   * Thinking tokens the provider drops because of this rewrite (reasoning bound to its prefix,
   * reasoning-cost.ts); absent on models whose reasoning is not bound.
   */
  reasoningDropped?: number;
  options?: Partial<GateOptions>;
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

export function writePriceFor(ttl: CacheTtl | undefined, pricing: CachePricing = DEFAULT_PRICING): number {
  return ttl === "1h" ? pricing.write1h : pricing.write5m;
}

export function pressureOf(usage: number, threshold: number): number {
  if (threshold >= 1) return 0;
  return Math.min(1, Math.max(0, (usage - threshold) / (1 - threshold)));
}

export function priceFlush(input: GateInput): GateDecision {
  const pricing = input.costModel?.pricing ?? input.pricing ?? DEFAULT_PRICING;
  const o = { ...DEFAULT_GATE_OPTIONS, ...input.options };
  const writePrice = writePriceFor(input.ttl, pricing);
  const readPrice = pricing.read;
  const removed = Math.max(0, input.tokensRemoved);
  const rewritten = Math.max(0, input.rewrittenTokens);
  const n = Math.max(1, input.expectedRequests);
  const cold = input.cacheCold === true;
  const unit = (p: number): number => p * writePrice + (1 - p) * readPrice;
  const now = cold ? 1 : clamp01(input.coldChance ?? 0);
  const later = clamp01(input.futureColdChance ?? 0);

  const rewriteCost = (1 - now) * rewritten * (writePrice - readPrice);
  const readSaving = removed * (unit(now) + unit(later) * (n - 1));

  const window = input.context?.window ?? 0;
  const contextTokens = input.context?.tokens ?? 0;
  const usage = window > 0 ? contextTokens / window : 0;
  const pressure = pressureOf(usage, o.pressureThreshold);
  const band = window * (1 - o.pressureThreshold);
  const share = band > 0 ? Math.min(1, removed / band) : 0;
  const compactionPrice = o.compactionPricePerToken ?? pricing.uncached + writePrice;
  const relief = pressure * share * contextTokens * compactionPrice;

  const saving = readSaving + relief;
  const reasoningCost = input.reasoningDropped === undefined ? 0 : reasoningDropCost(input.reasoningDropped, pricing);
  const net = saving - rewriteCost - reasoningCost;
  const breakEvenRequests = removed > 0 && readPrice > 0 ? (rewriteCost + reasoningCost) / (removed * readPrice) : null;

  let reason: GateReason;
  let apply: boolean;
  if (removed === 0) [apply, reason] = [false, "nothing-removed"];
  else if (cold) [apply, reason] = [net > o.minNetSaving, "cold-cache"];
  else {
    apply = net > o.minNetSaving;
    reason = apply ? "pays" : "defers";
  }
  return {
    apply,
    reason,
    numbers: {
      writePrice,
      readPrice,
      rewrittenTokens: rewritten,
      rewriteCost,
      tokensRemoved: removed,
      expectedRequests: n,
      readSaving,
      usage,
      pressure,
      relief,
      saving,
      net,
      breakEvenRequests,
      coldChance: now,
      futureColdChance: later,
      ...(input.reasoningDropped === undefined ? {} : { reasoningDropped: Math.max(0, input.reasoningDropped), reasoningCost }),
      ...(input.costModel ? { cacheRule: input.costModel.rule.label, writePremium: input.costModel.rule.writePremium } : {}),
    },
  };
}
