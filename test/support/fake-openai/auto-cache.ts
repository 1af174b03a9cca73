/**
 * OpenAI's automatic prefix caching, as a model for the fake servers' usage figures (the
 * project's own rule is `src/cache/cache-rules.ts`; this is only the fake provider):
 *
 * - The prompt is a sequence of units (each tool, then each input item or message), each
 *   ceil(JSON chars / 4) tokens; prefix identity is a hash chain over the units, seeded with the
 *   model.
 * - A request at least `minTokens` (1024) long is cached after it — each of its prefixes, for
 *   `ttlMs` (10 minutes) since its last use.
 * - A request reads the longest live cached prefix it starts with; the cached count is reported
 *   in `stepTokens` (128) steps from the minimum: 1024, 1152, 1280, … (below 1024: nothing).
 * - No write premium: the newly cached part is billed as plain input (OpenAI reports no write),
 *   unless `reportWrites` (models priced with cache writes, GPT-5.6+ on Codex): then a request
 *   that is cached after it reports what it did not read as written (`cache_write_tokens`).
 */
import { createHash } from "node:crypto";

export type AutoCacheEntry = { expiresAtMs: number };

export type AutoCacheOptions = { minTokens?: number; stepTokens?: number; ttlMs?: number; reportWrites?: boolean };

export type AutoCachePlan = { promptTokens: number; cachedTokens: number; writtenTokens?: number };

export function unitTokens(json: string): number {
  return Math.ceil(json.length / 4);
}

/** Tokens reported cached for a matched prefix of `matched` tokens. */
export function reportedCached(matched: number, minTokens = 1024, stepTokens = 128): number {
  if (matched < minTokens) return 0;
  return minTokens + Math.floor((matched - minTokens) / stepTokens) * stepTokens;
}

/** Plans one request against `cache` and stores (or refreshes) its prefixes in it. */
export function planAutoCache(key: string, units: string[], cache: Map<string, AutoCacheEntry>, nowMs: number, o: AutoCacheOptions = {}): AutoCachePlan {
  const minTokens = o.minTokens ?? 1024;
  const ttlMs = o.ttlMs ?? 10 * 60_000;
  let h = createHash("sha1").update(`model:${key}`).digest("hex");
  let sum = 0;
  let matched = 0;
  let broken = false;
  const prefixes: Array<[string, number]> = [];
  for (const u of units) {
    h = createHash("sha1").update(h).update(u).digest("hex");
    sum += unitTokens(u);
    prefixes.push([h, sum]);
    const live = cache.get(h);
    if (!broken && live && live.expiresAtMs > nowMs) matched = sum;
    else broken = true;
  }
  // Every prefix is kept (a short one is what a longer one extends); only ≥ minTokens is ever reported.
  if (sum >= minTokens) for (const [hash] of prefixes) cache.set(hash, { expiresAtMs: nowMs + ttlMs });
  const cachedTokens = Math.min(reportedCached(matched, minTokens, o.stepTokens ?? 128), sum);
  return { promptTokens: sum, cachedTokens, ...(o.reportWrites ? { writtenTokens: sum >= minTokens ? sum - cachedTokens : 0 } : {}) };
}
