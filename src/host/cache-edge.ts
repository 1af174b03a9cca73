/**
 * The host's side of the cache: what only Pi knows (the model, thinking level, active tools,
 * Pi's context usage, the retention env, the model's prices and cache rule), turned into the engine's cache facts and requests;
 * plus the live-only diagnostics for `/keeper cache` (per-layer fingerprints, bust
 * attribution, the rewrite tally) and the cache-warming override. Every decision is the engine's or a pure
 * function in `src/discipline/`; this file reads Pi and clocks.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { cacheFactsFor, type CostModel } from "../cache/cost-model.ts";
import type { CacheTtl } from "../discipline/gate.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { attributeBust, fingerprintLayersWithTail, recordFingerprint } from "../discipline/attribution.ts";
import { cacheTtlMs, warmingOverride, type CacheKeySnapshot, type WarmingDecisionFields } from "../discipline/cold-cache.ts";
import { tallyRequest } from "../discipline/rewrite-tally.ts";
import { appendToRing } from "../discipline/ring.ts";
import { digestBody } from "../cache/body-digest.ts";
import { messagePrefixesOf } from "../discipline/seam-placement.ts";
import { cacheFacts, ledgerFromBranch, step, type CacheLedger, type DisciplineFacts } from "../engine/index.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { BustAttribution } from "../discipline/schema.ts";
import { formatCacheView } from "../ui/cache-view.ts";
import { formatWhyView } from "../ui/why-view.ts";
import type { HostMemory } from "./host-types.ts";

export type CachePi = Pick<ExtensionAPI, "getThinkingLevel" | "getActiveTools">;

const ATTRIBUTION_CAPACITY = 16;

const longRetention = (): boolean => process.env.PI_CACHE_RETENTION === "long";

export interface LiveCacheRule {
  /** The session model's cost model; absent before Pi knows a model (then Anthropic's defaults). */
  costModel?: CostModel;
  ttlMs: number;
  ttl: CacheTtl;
}

const ruleMemo = new WeakMap<object, { long: boolean; rule: LiveCacheRule }>();

/** The session model's cache rule, lifetime (OpenAI entries live 10 min, Anthropic's 5) and TTL tier. */
export function liveCacheRule(ctx: Pick<ExtensionContext, "model">): LiveCacheRule {
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

/** What the cache is keyed on for a request sent at `at`. */
export function cacheKeyOf(pi: CachePi, ctx: ExtensionContext, at: number): CacheKeySnapshot {
  return { at, model: modelKey(ctx), thinkingLevel: String(pi.getThinkingLevel()), toolsDigest: [...pi.getActiveTools()].sort().join(",") };
}

/** Session (re)start: forget the process's requests, seed the ledger from the branch's recorded ones. */
export function restoreLedger(pi: CachePi, ctx: ExtensionContext, branch: readonly ContextMessage[]): CacheLedger {
  return ledgerFromBranch(branch, (at, model) => ({ ...cacheKeyOf(pi, ctx, at), model }));
}

/** The cache facts a flush (or the cold-cache check) decides with, now. */
export function liveFacts(memory: HostMemory, pi: CachePi, ctx: ExtensionContext, now: number): DisciplineFacts {
  const usage = ctx.getContextUsage();
  const rule = liveCacheRule(ctx);
  return cacheFacts(memory.engine.ledger, {
    current: cacheKeyOf(pi, ctx, now),
    ttlMs: rule.ttlMs,
    ...(rule.costModel ? { costModel: rule.costModel } : {}),
    ...(usage?.tokens != null && usage.contextWindow ? { context: { tokens: usage.tokens, window: usage.contextWindow } } : {}),
  });
}

function isWireBody(payload: unknown): payload is WireRequestBody {
  return typeof payload === "object" && payload !== null && Array.isArray((payload as { messages?: unknown }).messages);
}

export interface SendOptions {
  memory: HostMemory;
  pi: CachePi;
  ctx: ExtensionContext;
  settings: KeeperSettings;
  payload: unknown;
  now: number;
}

/**
 * `before_provider_request`: the engine records the request and places the seam; the host
 * fingerprints what goes out and attributes a bust. `undefined` keeps the payload.
 */
export function onProviderRequest({ memory, pi, ctx, settings, payload, now }: SendOptions): unknown {
  const warmPing = (payload as { max_tokens?: unknown } | null)?.max_tokens === 1;
  const key = cacheKeyOf(pi, ctx, now);
  const previousKey = memory.engine.ledger.lastKey;
  const rewroteSinceLast = memory.engine.ledger.rewroteSinceLast;
  const body = isWireBody(payload) ? payload : undefined;
  // The body is flattened and hashed once, against the last one (only what changed is hashed):
  // the seam's lazy move and the fingerprints share it (cache marks change neither).
  const digest = body && !warmPing ? digestBody(body, memory.bodyDigest) : undefined;
  if (digest) {
    memory.bodyDigest = digest;
    memory.tailHash = undefined; // set again below for this body (a tail continues only the last request's)
  }
  const blocks = digest?.blocks;
  const fingerprint = digest?.fingerprint;
  const messagePrefixes = body && fingerprint ? messagePrefixesOf(body, fingerprint) : undefined;
  const model = ctx.model ? { api: ctx.model.api, id: ctx.model.id } : undefined;
  const sent = step(memory.engine, { type: "before-request", body, key, warmPing, settings, model, ...(messagePrefixes && digest ? { messagePrefixes, flat: digest.blocks, flatTokens: digest.tokens } : {}) });
  memory.engine = sent.state;
  const out = sent.request ?? { body: undefined, seam: -1 };
  if (!body || !out.body) return undefined;
  if (warmPing) return out.body === body ? undefined : out.body;

  const { fingerprint: fp, tail } = fingerprintLayersWithTail(out.body, {
    at: now,
    model: key.model,
    thinkingLevel: key.thinkingLevel,
    seamMessageIndex: out.seam,
    ...(blocks && fingerprint && digest ? { precomputed: { blocks, fingerprint, tokens: digest.tokens, ...(messagePrefixes ? { messagePrefixes } : {}) } } : {}),
    ...(digest && memory.tailHash ? { previousTail: { tail: memory.tailHash, unchanged: digest.unchanged } } : {}),
  });
  memory.tailHash = tail;
  const previous = memory.fingerprints.entries[memory.fingerprints.entries.length - 1];
  let extended = false;
  let attribution: BustAttribution | undefined;
  if (previous && previousKey) {
    const rule = liveCacheRule(ctx);
    const verdict = attributeBust(previous, fp, {
      ttlMs: rule.ttlMs,
      ttl: rule.ttl,
      ...(rule.costModel ? { pricing: rule.costModel.pricing } : {}),
      keeperRewroteSinceLast: rewroteSinceLast,
      toolsChanged: previousKey.toolsDigest !== key.toolsDigest,
    });
    memory.attributions = appendToRing(memory.attributions, verdict, ATTRIBUTION_CAPACITY);
    extended = verdict.cause === "none";
    attribution = verdict;
  }
  memory.tally = tallyRequest(memory.tally, attribution);
  memory.fingerprints = recordFingerprint(memory.fingerprints, fp);
  memory.engine = step(memory.engine, { type: "attributed", extended }).state;
  return out.body === body ? undefined : out.body;
}

/** Do not pay to keep warm a prefix a waiting rewrite discards. */
export function onWarmingDecision(memory: HostMemory, settings: KeeperSettings, event: WarmingDecisionFields): { action: "stop" } | undefined {
  const pending = memory.engine.ledger.pending;
  if (!settings.enabled || !settings.cache.discipline || !pending) return undefined;
  return warmingOverride({ event, pendingRewrite: pending }) ? { action: "stop" } : undefined;
}

export const whyText = (memory: HostMemory): string => formatWhyView(memory.engine.gateLog);
export const cacheText = (memory: HostMemory): string =>
  formatCacheView({
    fingerprints: memory.fingerprints.entries,
    attributions: memory.attributions,
    tally: memory.tally,
    sessionRewrites: memory.engine.keeper.stats.rewritesCaused,
  });
