/**
 * The cache diagnostics of the requests that went out, as engine state (`/keeper cache`):
 * each main request's body digested against the last one, its per-layer fingerprints (a
 * short log), the newest cache rewrites with their cause (a short ring of the busts the tally
 * counts, so `/keeper cache` lists the newest of the rewrites it counts), and the rewrite tally
 * (requests, busts, where each flush rewrite went on the wire). Plain data with reducers;
 * the `before-request` step (step.ts) feeds it, with the session model's cache rule the
 * caller supplies. The live host fingerprints every request; the replay has no such view and
 * gives no rule, so only the digest runs there (the seam placement reuses it).
 */
import { digestBody, type BodyDigest } from "../cache/body-digest.ts";
import type { CostModel } from "../cache/cost-model.ts";
import { emptyReasoningDropTally, tallyReasoningDrop, type ReasoningDropTally } from "../cache/reasoning-drops.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { attributeBust, emptyFingerprintLog, fingerprintLayersWithTail, recordFingerprint, type TailHash } from "../discipline/attribution.ts";
import type { CacheKeySnapshot } from "../discipline/cold-cache.ts";
import type { CacheTtl } from "../discipline/gate.ts";
import { emptyRewriteTally, tallyFlushRewrite, tallyRequest, type RewriteTally } from "../discipline/rewrite-tally.ts";
import { appendToRing } from "../discipline/ring.ts";
import type { BustAttribution, FingerprintLog } from "../discipline/schema.ts";
import { messagePrefixesOf } from "../discipline/seam-placement.ts";
import type { CacheViewInput } from "../ui/cache-view.ts";

export interface WireLog {
  /** The last main request body's flat blocks and fingerprints: the next one is digested against it. */
  bodyDigest: BodyDigest | undefined;
  /** The last main request's tail hash (blocks after the seam), continued by the next one. */
  tailHash: TailHash | undefined;
  fingerprints: FingerprintLog;
  /** The newest cache rewrites (attributions whose cause is not "none"), oldest first. */
  busts: BustAttribution[];
  /** Requests, busts and where each flush rewrite went on the wire since this process started. */
  tally: RewriteTally;
  /** Reasoning the provider dropped, from Pi's diagnostics on each answer (reasoning-drops.ts). */
  reasoning: ReasoningDropTally;
  /** Pi's cache-warming decisions to warm (`cache_warming_decision`), and those this extension stopped, by reason. */
  warming: WarmingTally;
}

export interface WarmingTally {
  /** Decisions where Pi was about to pay for a refresh. */
  asked: number;
  /** Stopped: a rewrite (applied and not sent yet, or held back) discards most of the warmed prefix. */
  stoppedForRewrite: number;
  /** Stopped: a compaction about to apply discards it. */
  stoppedForCompaction: number;
}

/** A warming decision: `asked` (default true) counts Pi's "warm", `stopped` what this extension turned it into. */
export function wireLogOnWarming(log: WireLog, stopped: "rewrite" | "compaction" | undefined, asked = true): WireLog {
  const w = log.warming;
  return {
    ...log,
    warming: {
      asked: w.asked + (asked ? 1 : 0),
      stoppedForRewrite: w.stoppedForRewrite + (stopped === "rewrite" ? 1 : 0),
      stoppedForCompaction: w.stoppedForCompaction + (stopped === "compaction" ? 1 : 0),
    },
  };
}

export function emptyWireLog(): WireLog {
  return { bodyDigest: undefined, tailHash: undefined, fingerprints: emptyFingerprintLog(), busts: [], tally: emptyRewriteTally(), reasoning: emptyReasoningDropTally(), warming: { asked: 0, stoppedForRewrite: 0, stoppedForCompaction: 0 } };
}

/**
 * A message ended: an answer's reasoning its request had dropped (Pi's diagnostics), decided
 * anew when that request's history changed (its attribution found a changed layer), counted against this extension when the
 * bust was its rewrite (`sentAt`: the last request's send time, the key of its attribution).
 * A request that extended the previous one has no entry among the busts, so it is neither.
 */
export function wireLogOnAnswer(log: WireLog, message: unknown, sentAt: number | undefined): WireLog {
  const last = log.busts[log.busts.length - 1];
  const ofLast = last !== undefined && last.at === sentAt;
  const reasoning = tallyReasoningDrop(log.reasoning, message, { rewritten: ofLast && last.layer !== "none", keeperRewrote: ofLast && last.cause === "keeper-rewrite" });
  return reasoning === log.reasoning ? log : { ...log, reasoning };
}

/** The session model's cache rule, as far as bust attribution needs it. */
export interface CacheRuleFacts {
  ttlMs: number;
  ttl: CacheTtl;
  costModel?: CostModel;
}

const BUST_CAPACITY = 16;

/** What the seam placement may reuse of a request's digest. */
export interface RequestDigest {
  digest: BodyDigest;
  messagePrefixes: readonly string[];
}

/**
 * A main request's body, flattened and hashed once against the last one (only what changed is
 * hashed): the seam's lazy move and the fingerprints share it (cache marks change neither).
 */
export function digestRequest(log: WireLog, body: WireRequestBody): { log: WireLog; digested: RequestDigest } {
  const digest = digestBody(body, log.bodyDigest);
  // A tail continues only the last request's: set again once this body is fingerprinted.
  return { log: { ...log, bodyDigest: digest, tailHash: undefined }, digested: { digest, messagePrefixes: messagePrefixesOf(body, digest.fingerprint) } };
}

export interface SentRequest {
  /** The body as it goes out (seam placed). */
  body: WireRequestBody;
  seam: number;
  key: CacheKeySnapshot;
  /** The cache key of the request before (undefined: none). */
  previousKey: CacheKeySnapshot | undefined;
  /** A flush rewrote history since the request before. */
  rewroteSinceLast: boolean;
  rule: CacheRuleFacts;
  digested: RequestDigest | undefined;
}

/** The request's fingerprints and, against the last one, its bust attribution. `extended`: it read the previous prefix back whole. */
export function wireLogOnSend(log: WireLog, sent: SentRequest): { log: WireLog; extended: boolean } {
  const { body, key, digested, rule } = sent;
  const digest = digested?.digest;
  const { fingerprint, tail } = fingerprintLayersWithTail(body, {
    at: key.at,
    model: key.model,
    thinkingLevel: key.thinkingLevel,
    seamMessageIndex: sent.seam,
    ...(digest && digested ? { precomputed: { blocks: digest.blocks, fingerprint: digest.fingerprint, tokens: digest.tokens, messagePrefixes: digested.messagePrefixes } } : {}),
    ...(digest && log.tailHash ? { previousTail: { tail: log.tailHash, unchanged: digest.unchanged } } : {}),
  });
  const previous = log.fingerprints.entries[log.fingerprints.entries.length - 1];
  let busts = log.busts;
  let attribution: BustAttribution | undefined;
  if (previous && sent.previousKey) {
    attribution = attributeBust(previous, fingerprint, {
      ttlMs: rule.ttlMs,
      ttl: rule.ttl,
      ...(rule.costModel ? { pricing: rule.costModel.pricing } : {}),
      keeperRewroteSinceLast: sent.rewroteSinceLast,
      toolsChanged: sent.previousKey.toolsDigest !== key.toolsDigest,
    });
    if (attribution.cause !== "none") busts = appendToRing(busts, attribution, BUST_CAPACITY);
  }
  return {
    log: { ...log, tailHash: tail, busts, tally: tallyRequest(log.tally, attribution), fingerprints: recordFingerprint(log.fingerprints, fingerprint) },
    extended: attribution?.cause === "none",
  };
}

/** A flush (or a cold re-plan) changed rendered history: the tally follows it to the wire. */
export function wireLogOnRewrite(log: WireLog): WireLog {
  return { ...log, tally: tallyFlushRewrite(log.tally) };
}

/** What `/keeper cache` shows (`formatCacheView`); `sessionRewrites` is the persisted `stats.rewritesCaused`. */
export function cacheViewOf(log: WireLog, sessionRewrites: number): CacheViewInput {
  return { fingerprints: log.fingerprints.entries, busts: log.busts, tally: log.tally, sessionRewrites, reasoning: log.reasoning, warming: log.warming };
}
