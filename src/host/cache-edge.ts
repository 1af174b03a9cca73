/**
 * What only Pi knows about the cache, read for the engine: the session model's cache rule
 * and prices (`cacheFactsFor(ctx.model, …)`: its rule, entry lifetime and TTL tier), what the
 * cache is keyed on (model, thinking level, active tools), the retention env, Pi's context
 * usage. Every decision — the ledger, the seam, fingerprints and bust attribution, the
 * warming override — is the engine's; this file reads Pi and clocks.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { cacheFactsFor } from "../cache/cost-model.ts";
import { toolChangesInPlace, toolsKeyDigest } from "../cache/tool-changes.ts";
import { cacheTtlMs, type CacheKeySnapshot } from "../discipline/cold-cache.ts";
import { cacheFacts, type CacheRuleFacts, type DisciplineFacts, type EngineState } from "../engine/index.ts";

export type CachePi = Pick<ExtensionAPI, "getThinkingLevel" | "getActiveTools">;

const longRetention = (): boolean => process.env.PI_CACHE_RETENTION === "long";

/** Pi's model objects are long-lived: their rule is worked out once per model (and retention). */
const ruleMemo = new WeakMap<object, { long: boolean; rule: CacheRuleFacts }>();

/** The session model's cache rule, lifetime (OpenAI entries live 10 min, Anthropic's 5) and TTL tier. */
export function liveCacheRule(ctx: Pick<ExtensionContext, "model">): CacheRuleFacts {
  const long = longRetention();
  const model = ctx.model;
  if (!model) return { ttlMs: cacheTtlMs({ longRetention: long }), ttl: long ? "1h" : "5m" };
  const memo = ruleMemo.get(model);
  if (memo && memo.long === long) return memo.rule;
  const rule = cacheFactsFor(model, long);
  ruleMemo.set(model, { long, rule });
  return rule;
}

export const liveTtlMs = (ctx: Pick<ExtensionContext, "model">): number => liveCacheRule(ctx).ttlMs;

function modelKey(ctx: ExtensionContext): string {
  return ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : "";
}

/**
 * What the cache is keyed on besides the model and the time: Pi's thinking level and active
 * tools (a change counts only on models that do not take tool changes in place: tool-changes.ts).
 */
export function keyParts(pi: CachePi, model: Pick<ExtensionContext, "model">["model"]): { thinkingLevel: string; toolsDigest: string } {
  return { thinkingLevel: String(pi.getThinkingLevel()), toolsDigest: toolsKeyDigest(toolChangesInPlace(model), pi.getActiveTools()) };
}

/** What the cache is keyed on for a request sent at `at`. */
export function cacheKeyOf(pi: CachePi, ctx: ExtensionContext, at: number): CacheKeySnapshot {
  return { at, model: modelKey(ctx), ...keyParts(pi, ctx.model) };
}

/** The cache facts a flush (or the cold-cache check) decides with, now. */
export function liveFacts(state: EngineState, pi: CachePi, ctx: ExtensionContext, now: number): DisciplineFacts {
  const usage = ctx.getContextUsage();
  const rule = liveCacheRule(ctx);
  return cacheFacts(state.ledger, {
    current: cacheKeyOf(pi, ctx, now),
    ttlMs: rule.ttlMs,
    ...(rule.costModel ? { costModel: rule.costModel } : {}),
    ...(usage?.tokens != null && usage.contextWindow ? { context: { tokens: usage.tokens, window: usage.contextWindow } } : {}),
  });
}
