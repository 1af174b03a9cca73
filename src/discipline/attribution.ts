/**
 * Bust attribution: hash each request's cache layers — tools, system, frozen history (messages
 * up to the seam) and tail (after it) — keep the last few, and when a request fails to extend
 * the previous one, name the cause and price it.
 *
 * Causes, most decisive first (the first that holds explains the whole bust; later ones
 * would have cost nothing extra): TTL expiry, model switch, thinking change, tool change,
 * system prompt change, this extension's flush rewrite, unknown.
 *
 * Cost: previously cached tokens that must be written again × (write − read). Which tokens
 * depends on the cause: everything for TTL expiry, model and tool changes; system + messages
 * for a system change; messages for a thinking change (Anthropic keys the messages cache on
 * thinking settings); messages from the first changed one for a history rewrite. Each region
 * counts min(previous, current) tokens, because a rewrite that removed tokens writes fewer.
 */
import { flattenRequest, type FlatBlock } from "../cache/flatten.ts";
import { fingerprintRequest, type LayerFingerprints } from "../cache/fingerprints.ts";
import { chainHash, EMPTY_PREFIX_HASH } from "../cache/prefix-hash.ts";
import { DEFAULT_PRICING, type CachePricing } from "../cache/pricing.ts";
import { createCharRatioEstimator, type TokenEstimator } from "../cache/token-estimator.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { writePriceFor, type CacheTtl } from "./gate.ts";
import { appendToRing } from "./ring.ts";
import type { BustAttribution, BustCause, FingerprintLog, RequestFingerprint } from "./schema.ts";

const SHORT = 12;

export interface FingerprintOptions {
  at: number;
  model: string;
  thinkingLevel: string;
  /** Index in body.messages of the last frozen message (−1: none). */
  seamMessageIndex: number;
  /**
   * `flattenRequest(body)` and `fingerprintRequest(body)` when the caller has them (marks change
   * neither); `tokens`: the default estimate of each block, aligned with `blocks` (used when no `estimate` is given);
   * `messagePrefixes`: the fingerprint's message hashes cut to their first 12 characters (`messagePrefixesOf`).
   */
  precomputed?: { blocks: readonly FlatBlock[]; fingerprint: LayerFingerprints; tokens?: readonly number[]; messagePrefixes?: readonly string[] };
  /** The last request's tail and how many leading messages this body shares with it: the tail hash continues it (`tailHashOf`). */
  previousTail?: { tail: TailHash; unchanged: number };
  estimate?: TokenEstimator;
}

/** The tail layer's hash: the message blocks after the seam, chained; `through`: the messages it covers end there. */
export interface TailHash {
  seam: number;
  through: number;
  hash: string;
}

/**
 * The chained hash of the message blocks after `seam` (−1: all of them). `from`, the last
 * request's tail, is continued when it had the same seam and every message it covered is
 * unchanged (`unchanged`: how many leading messages equal the last request's) — the same hash
 * as from scratch, hashing only the new blocks. `blocks` in `flattenRequest` order (tools,
 * system, then messages in order): the blocks hashed are a run at its end.
 */
export function tailHashOf(blocks: readonly FlatBlock[], o: { seam: number; messageCount: number; from?: TailHash; unchanged?: number }): TailHash {
  const resume = o.from !== undefined && o.from.seam === o.seam && o.from.through > o.seam && o.from.through <= (o.unchanged ?? 0);
  let hash = resume ? o.from!.hash : EMPTY_PREFIX_HASH;
  const start = resume ? o.from!.through : o.seam + 1;
  // Message blocks come last, in message order: only the run from `start` on is read.
  let from = blocks.length;
  while (from > 0 && blocks[from - 1].layer === "messages" && blocks[from - 1].messageIndex >= start) from--;
  for (let i = from; i < blocks.length; i++) hash = chainHash(hash, blocks[i].bytes);
  return { seam: o.seam, through: o.messageCount, hash };
}

export function fingerprintLayers(body: WireRequestBody, options: FingerprintOptions): RequestFingerprint {
  return fingerprintLayersWithTail(body, options).fingerprint;
}

/** `fingerprintLayers`, and the full tail hash for the next request to continue. */
export function fingerprintLayersWithTail(body: WireRequestBody, options: FingerprintOptions): { fingerprint: RequestFingerprint; tail: TailHash } {
  const fp = options.precomputed?.fingerprint ?? fingerprintRequest(body);
  const known = options.estimate ? undefined : options.precomputed?.tokens;
  const estimate = options.estimate ?? createCharRatioEstimator();
  const seam = Math.min(options.seamMessageIndex, body.messages.length - 1);
  const tokens = { tools: 0, system: 0, messages: body.messages.map(() => 0) };
  const blocks = options.precomputed?.blocks ?? flattenRequest(body);
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    const t = known ? known[i] : estimate(b);
    if (b.layer === "tools") tokens.tools += t;
    else if (b.layer === "system") tokens.system += t;
    else tokens.messages[b.messageIndex] += t;
  }
  const previous = options.previousTail;
  const tail = tailHashOf(blocks, { seam, messageCount: body.messages.length, ...(previous ? { from: previous.tail, unchanged: previous.unchanged } : {}) });
  const fingerprint: RequestFingerprint = {
    at: options.at,
    model: options.model,
    thinkingLevel: options.thinkingLevel,
    seamMessageIndex: seam,
    layers: {
      tools: fp.tools.slice(0, SHORT),
      system: fp.system.slice(0, SHORT),
      frozen: (seam >= 0 ? fp.messages[seam] : EMPTY_PREFIX_HASH).slice(0, SHORT),
      tail: tail.hash.slice(0, SHORT),
    },
    messagePrefixes: options.precomputed?.messagePrefixes ? [...options.precomputed.messagePrefixes] : fp.messages.map((h) => h.slice(0, SHORT)),
    tokens,
  };
  return { fingerprint, tail };
}

export const DEFAULT_FINGERPRINT_LOG_CAPACITY = 8;

export function emptyFingerprintLog(capacity = DEFAULT_FINGERPRINT_LOG_CAPACITY): FingerprintLog {
  return { capacity: Math.max(1, Math.floor(capacity)), entries: [] };
}

export function recordFingerprint(log: FingerprintLog, fingerprint: RequestFingerprint): FingerprintLog {
  return { capacity: log.capacity, entries: appendToRing(log.entries, fingerprint, log.capacity) };
}

export interface BustContext {
  /** Cache entry lifetime (ms) of the previous request's marks. */
  ttlMs: number;
  ttl?: CacheTtl;
  /** This extension applied a flush rewrite between the two requests. */
  keeperRewroteSinceLast: boolean;
  /** Known changes from Pi events (OR'ed with what the fingerprints show). */
  modelChanged?: boolean;
  thinkingChanged?: boolean;
  toolsChanged?: boolean;
  pricing?: CachePricing;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** First message index whose prefix hash differs, or undefined when `current` extends `previous`. */
export function firstChangedMessage(previous: RequestFingerprint, current: RequestFingerprint): number | undefined {
  const shared = Math.min(previous.messagePrefixes.length, current.messagePrefixes.length);
  for (let i = 0; i < shared; i++) if (previous.messagePrefixes[i] !== current.messagePrefixes[i]) return i;
  return current.messagePrefixes.length < previous.messagePrefixes.length ? shared : undefined;
}

export function attributeBust(previous: RequestFingerprint, current: RequestFingerprint, ctx: BustContext): BustAttribution {
  const pricing = ctx.pricing ?? DEFAULT_PRICING;
  const unitCost = writePriceFor(ctx.ttl, pricing) - pricing.read;
  const gap = current.at - previous.at;
  const toolsDiffer = previous.layers.tools !== current.layers.tools;
  const systemDiffer = previous.layers.system !== current.layers.system;
  const changedAt = firstChangedMessage(previous, current);
  const layer: BustAttribution["layer"] = toolsDiffer
    ? "tools"
    : systemDiffer
      ? "system"
      : changedAt === undefined
        ? "none"
        : changedAt <= previous.seamMessageIndex
          ? "frozen"
          : "tail";

  // Token sums only for the verdict that needs them (the usual one, "none", needs none).
  const messagesFrom = (i: number): number => Math.min(sum(previous.tokens.messages.slice(i)), sum(current.tokens.messages.slice(i)));
  const allMessages = (): number => messagesFrom(0);
  const systemAndMessages = (): number => Math.min(previous.tokens.system, current.tokens.system) + allMessages();
  const everything = (): number => Math.min(previous.tokens.tools, current.tokens.tools) + systemAndMessages();

  const verdict = (cause: BustCause, rewrittenTokens: number, detail: string): BustAttribution => ({
    at: current.at,
    cause,
    layer,
    ...(changedAt !== undefined && layer !== "tools" && layer !== "system" ? { firstChangedMessage: changedAt } : {}),
    rewrittenTokens,
    estimatedCost: rewrittenTokens * unitCost,
    detail,
  });

  if (gap > ctx.ttlMs) return verdict("ttl-expiry", everything(), `gap ${Math.round(gap / 1000)} s > TTL ${Math.round(ctx.ttlMs / 1000)} s`);
  if (ctx.modelChanged || previous.model !== current.model) return verdict("model-switch", everything(), `${previous.model} → ${current.model}`);
  if (ctx.thinkingChanged || previous.thinkingLevel !== current.thinkingLevel)
    return verdict("thinking-change", allMessages(), `thinking ${previous.thinkingLevel} → ${current.thinkingLevel}`);
  if (ctx.toolsChanged || toolsDiffer) return verdict("tool-change", everything(), "tool definitions changed");
  if (systemDiffer) return verdict("system-change", systemAndMessages(), "system prompt changed");
  if (changedAt === undefined) return verdict("none", 0, "request extends the previous one");
  const where = `${layer} history from message ${changedAt}`;
  if (ctx.keeperRewroteSinceLast) return verdict("keeper-rewrite", messagesFrom(changedAt), `flush rewrite of ${where}`);
  return verdict("unknown", messagesFrom(changedAt), `unexplained change of ${where}`);
}
