/**
 * What the engine knows about the provider's prompt cache, as plain data with reducers: the
 * one copy of the cache facts a flush decides with, for the live host and the replay.
 *
 * - `ledgerOnSend`: every request's send time and cache key (model, thinking level, tools);
 *   the seam mark at the end of the frozen history (Anthropic Messages only) and whether the
 *   request carried it; a warm ping (`max_tokens: 1`) only refreshes the key's time.
 * - `ledgerOnUsage`: the provider's usage, to count unannounced cache losses.
 * - `cacheFacts`: cold (TTL expired, key changed, or Pi compacted since the last request),
 *   TTL, the request horizon's times, the seam, the context pressure, the losses and the
 *   session model's cost model (its cache rule and price ratios).
 * The live host feeds it Pi's events; the replay feeds it the recorded requests.
 */
import type { CostModel } from "../cache/cost-model.ts";
import { TTL_1H_MS } from "../cache/pricing.ts";
import type { FlatBlock } from "../cache/flatten.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { detectColdCache, type CacheKeySnapshot, type ColdCacheVerdict, type PendingRewrite } from "../discipline/cold-cache.ts";
import { emptyObservedLosses, LOSS_READ_SHARE, recordObservation, type ObservedLosses } from "../discipline/observed-loss.ts";
import { messagePrefixesOf, placeSeamAtFrozenBoundary } from "../discipline/seam-placement.ts";
import { isAssistant, isUser, timestampOf, type ContextMessage } from "../session/messages.ts";
import type { DisciplineFacts } from "./decide.ts";

export interface CacheLedger {
  /** Send times (ms) of this session's main requests so far, oldest first. */
  requestTimes: number[];
  /** What the cache was keyed on at the last request (undefined: none yet). */
  lastKey: CacheKeySnapshot | undefined;
  /** Pi compacted since the last request: the next one writes everything anyway. */
  compacted: boolean;
  /** The last main request carried a seam mark; its body, for the seam's lazy move. */
  seam: { placed: boolean; previous?: { body: WireRequestBody; seamMessageIndex: number; messagePrefixes?: readonly string[] } };
  losses: ObservedLosses;
  /** The request in flight, for loss counting when its answer arrives. */
  inFlight: { kind: "prompt" | "loop"; countable: boolean } | undefined;
  lastPromptTokens: number;
  /** The earliest rewrite the gate still holds back (cache-warming decisions). */
  pending: PendingRewrite | undefined;
  /** A rewrite a flush applied that the next request carries (cache-warming decisions); gone once a request is sent. */
  unsent: PendingRewrite | undefined;
  /** A flush rewrote history since the last request (bust attribution). */
  rewroteSinceLast: boolean;
}

export function emptyCacheLedger(): CacheLedger {
  return {
    requestTimes: [],
    lastKey: undefined,
    compacted: false,
    seam: { placed: false },
    losses: emptyObservedLosses(),
    inFlight: undefined,
    lastPromptTokens: 0,
    pending: undefined,
    unsent: undefined,
    rewroteSinceLast: false,
  };
}

/**
 * Of two rewrites waiting in the cached prefix, the one that keeps less of it (the warming vote
 * prices a warm of the entry by what survives: the rewrite applied but not sent yet, the one the
 * gate holds back, or two applied flushes the next request carries together).
 */
export function nearerRewrite(a: PendingRewrite | undefined, b: PendingRewrite | undefined): PendingRewrite | undefined {
  if (!a || !b) return a ?? b;
  return a.keptPrefixTokens <= b.keptPrefixTokens ? a : b;
}

/** A resumed session: its recorded requests feed the horizon; the last one may still be cached. */
export function ledgerFromBranch(branch: readonly ContextMessage[], keyAt: (at: number, model: string) => CacheKeySnapshot): CacheLedger {
  const ledger = emptyCacheLedger();
  for (const m of branch) {
    const t = timestampOf(m);
    if (!isAssistant(m) || t === undefined || !(m as { usage?: unknown }).usage) continue;
    ledger.requestTimes.push(t);
    ledger.lastKey = keyAt(t, `${m.provider}/${m.model}`);
  }
  return ledger;
}

export function coldVerdictOf(ledger: CacheLedger, current: CacheKeySnapshot, ttlMs: number): ColdCacheVerdict {
  const verdict = detectColdCache({ previous: ledger.lastKey, current, ttlMs });
  return ledger.compacted && !verdict.cold ? { ...verdict, cold: true } : verdict;
}

export interface CacheFactsInput {
  /** The cache key of the request about to be sent. */
  current: CacheKeySnapshot;
  /** Entry lifetime under the session model's cache rule (`ruleTtlMs`: OpenAI 10 min, Anthropic 5 min). */
  ttlMs: number;
  /** The session model's cost model (cache/cost-model.ts): the gate prices with its ratios and rule. */
  costModel?: CostModel;
  /** Context size and window now, for relief under pressure. */
  context?: { tokens: number; window: number };
  /** Losses from elsewhere (the replay reads them from the recording); default: the ledger's own. */
  observedLosses?: ObservedLosses;
}

export function cacheFacts(ledger: CacheLedger, input: CacheFactsInput): DisciplineFacts {
  const verdict = coldVerdictOf(ledger, input.current, input.ttlMs);
  return {
    requestTimes: ledger.requestTimes,
    cold: verdict.cold,
    ttl: verdict.ttlMs >= TTL_1H_MS ? "1h" : "5m",
    ttlMs: verdict.ttlMs,
    ...(input.context ? { context: input.context } : {}),
    ...(input.costModel ? { costModel: input.costModel } : {}),
    seamActive: ledger.seam.placed,
    observedLosses: input.observedLosses ?? ledger.losses,
  };
}

export interface LedgerSendInput {
  /** The serialized request (absent: not a wire body this engine understands). */
  body: WireRequestBody | undefined;
  key: CacheKeySnapshot;
  /** A keep-warm ping (`max_tokens: 1`): not a main request. */
  warmPing: boolean;
  /** Place the seam mark (cache discipline and `cache.seam` on, a model known). */
  seam: { frozenThroughTimestamp: number | undefined; api: string | undefined; modelId: string } | undefined;
  /** The messages the `context` render returned for this request. */
  rendered: readonly ContextMessage[];
  /** `messagePrefixesOf(body)` and `flattenRequest(body)` when the caller already has them (the host's fingerprints). */
  messagePrefixes?: readonly string[];
  flat?: readonly FlatBlock[];
  /** The default token estimate of each of `flat`'s blocks, when the caller has it. */
  flatTokens?: readonly number[];
}

/** One request about to be sent: the ledger after it and the body to send (seam placed). */
export function ledgerOnSend(ledger: CacheLedger, input: LedgerSendInput): { ledger: CacheLedger; body: WireRequestBody | undefined; seam: number } {
  const { key, warmPing } = input;
  const next: CacheLedger = {
    ...ledger,
    requestTimes: warmPing ? ledger.requestTimes : [...ledger.requestTimes, key.at],
    compacted: warmPing ? ledger.compacted : false,
    lastKey: warmPing && ledger.lastKey ? { ...ledger.lastKey, at: key.at } : key,
  };
  if (!input.body) return { ledger: next, body: undefined, seam: -1 };
  const previous = ledger.seam.previous;
  const placed = input.seam
    ? placeSeamAtFrozenBoundary({
        body: input.body,
        rendered: input.rendered,
        frozenThroughTimestamp: input.seam.frozenThroughTimestamp,
        api: input.seam.api,
        modelId: input.seam.modelId,
        ...(previous ? { previous: { seamMessageIndex: previous.seamMessageIndex, messagePrefixes: previous.messagePrefixes ?? messagePrefixesOf(previous.body) } } : {}),
        ...(input.messagePrefixes ? { currentPrefixes: input.messagePrefixes } : {}),
        ...(input.flat ? { flat: input.flat } : {}),
        ...(input.flat && input.flatTokens ? { flatTokens: input.flatTokens } : {}),
      })
    : { body: input.body, seam: -1 };
  if (warmPing) return { ledger: next, body: placed.body, seam: placed.seam };
  const last = input.rendered[input.rendered.length - 1];
  return {
    ledger: {
      ...next,
      seam: {
        placed: placed.seam >= 0,
        previous: { body: placed.body, seamMessageIndex: Math.min(placed.seam, placed.body.messages.length - 1), ...(input.messagePrefixes ? { messagePrefixes: input.messagePrefixes } : {}) },
      },
      rewroteSinceLast: false,
      unsent: undefined,
      inFlight: { kind: last !== undefined && isUser(last) ? "prompt" : "loop", countable: false },
    },
    body: placed.body,
    seam: placed.seam,
  };
}

/**
 * The request just sent read the previous prefix back whole (bust attribution found no
 * cause): its answer counts toward the loss statistics.
 */
export function ledgerExtended(ledger: CacheLedger, extended: boolean): CacheLedger {
  if (!ledger.inFlight) return ledger;
  return { ...ledger, inFlight: { ...ledger.inFlight, countable: extended && ledger.lastPromptTokens > 0 } };
}

/** The provider's usage for the request in flight. */
export function ledgerOnUsage(ledger: CacheLedger, message: ContextMessage): CacheLedger {
  const u = (message as { usage?: { input?: number; cacheRead?: number; cacheWrite?: number } }).usage;
  if (!isAssistant(message) || !u) return ledger;
  const prompt = (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
  if (prompt === 0) return ledger;
  const losses = ledger.inFlight?.countable
    ? recordObservation(ledger.losses, ledger.inFlight.kind, (u.cacheRead ?? 0) < LOSS_READ_SHARE * ledger.lastPromptTokens)
    : ledger.losses;
  return { ...ledger, losses, inFlight: undefined, lastPromptTokens: prompt };
}
