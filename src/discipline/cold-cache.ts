/**
 * Cold-cache opportunism: when the cached prefix is already lost, a rewrite costs nothing
 * extra, so everything that waits (deferred by the gate or the grid) should go now.
 *
 * The entry is lost when the gap since the last request exceeds its TTL (5 minutes, or 1 hour
 * with long retention), or when something the cache is keyed on changed since then: the model
 * (each model has its own cache), thinking switched on or off, or the tool set (tools come
 * first in the prefix). A change of level with thinking on both times does not count: the
 * recorded corpus session kept its cache across one (high → minimal read 122,036 of 122,039
 * tokens), while every on/off switch in it lost the cache.
 *
 * Also: do not pay Pi to keep warm a cache that a pending rewrite is about to discard.
 */
import { TTL_1H_MS, TTL_5M_MS } from "../cache/pricing.ts";

/** What the cache was keyed on at a request. */
export interface CacheKeySnapshot {
  /** Send time, ms. */
  at: number;
  /** provider/id of the model. */
  model: string;
  thinkingLevel: string;
  /** Any stable digest of the tool definitions as sent. */
  toolsDigest: string;
}

export type ColdReason = "no-previous-request" | "ttl-expired" | "model-changed" | "thinking-changed" | "tools-changed";

export interface ColdCacheInput {
  previous: CacheKeySnapshot | undefined;
  current: CacheKeySnapshot;
  /** PI_CACHE_RETENTION=long (1-hour marks). */
  longRetention?: boolean;
  /** Overrides the TTL (ms), e.g. from pi-ai's getPromptCacheTtlMs. */
  ttlMs?: number;
}

export interface ColdCacheVerdict {
  cold: boolean;
  /** Every reason that holds, most decisive first. */
  reasons: ColdReason[];
  gapMs: number | undefined;
  ttlMs: number;
}

export function cacheTtlMs(input: { longRetention?: boolean; ttlMs?: number }): number {
  return input.ttlMs ?? (input.longRetention ? TTL_1H_MS : TTL_5M_MS);
}

function thinkingOn(level: string): boolean {
  return level !== "off" && level !== "";
}

export function detectColdCache(input: ColdCacheInput): ColdCacheVerdict {
  const ttlMs = cacheTtlMs(input);
  const prev = input.previous;
  if (prev === undefined) return { cold: true, reasons: ["no-previous-request"], gapMs: undefined, ttlMs };
  const cur = input.current;
  const gapMs = cur.at - prev.at;
  const reasons: ColdReason[] = [];
  if (gapMs > ttlMs) reasons.push("ttl-expired");
  if (cur.model !== prev.model) reasons.push("model-changed");
  if (thinkingOn(cur.thinkingLevel) !== thinkingOn(prev.thinkingLevel)) reasons.push("thinking-changed");
  if (cur.toolsDigest !== prev.toolsDigest) reasons.push("tools-changed");
  return { cold: reasons.length > 0, reasons, gapMs, ttlMs };
}

/** The fields of Pi's `cache_warming_decision` event (dollars and a probability). */
export interface WarmingDecisionFields {
  warmCost: number;
  missCost: number;
  continuationProbability: number;
  action: "warm" | "stop";
}

/** A rewrite that the next flush or render will apply from some point of the cached prefix. */
export interface PendingRewrite {
  /** Cached tokens before the rewrite's first change (they survive it). */
  keptPrefixTokens: number;
  /** All cached tokens of the entry being warmed. */
  cachedPrefixTokens: number;
}

export interface WarmingOverrideInput {
  event: WarmingDecisionFields;
  /** true: a rewrite from the start of history is due; an object: where it starts; false/undefined: none. */
  pendingRewrite?: boolean | PendingRewrite;
  /** Pi's own threshold (CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS, $0.05). */
  minimumExpectedSavings?: number;
}

export interface WarmingOverride {
  action: "stop";
  reason: string;
}

/**
 * Only ever turns Pi's "warm" into "stop". With a pending rewrite, only the part of the entry
 * before the rewrite's first change is still worth keeping, so the miss cost shrinks to that
 * share: warm only if continuationProbability × missCost × kept/cached − warmCost still
 * reaches the minimum.
 */
export function warmingOverride(input: WarmingOverrideInput): WarmingOverride | undefined {
  const { event, pendingRewrite } = input;
  if (event.action !== "warm" || !pendingRewrite) return undefined;
  if (pendingRewrite === true) return { action: "stop", reason: "a due rewrite discards the cached prefix" };
  const cached = Math.max(0, pendingRewrite.cachedPrefixTokens);
  const kept = Math.min(cached, Math.max(0, pendingRewrite.keptPrefixTokens));
  const keptShare = cached > 0 ? kept / cached : 0;
  const expected = event.continuationProbability * event.missCost * keptShare - event.warmCost;
  const minimum = input.minimumExpectedSavings ?? 0.05;
  if (expected >= minimum) return undefined;
  return {
    action: "stop",
    reason: `a due rewrite keeps ${(keptShare * 100).toFixed(0)}% of the cached prefix; expected saving $${expected.toFixed(4)} < $${minimum}`,
  };
}
