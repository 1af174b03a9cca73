/**
 * Prompt-cache analyzer: replays Anthropic Messages request bodies in order against a model
 * of the provider's prefix cache and reports, per request, what was read, written and left
 * uncached, what it cost, and whether it busted the cache.
 *
 * Cache model (Anthropic docs):
 * - The prompt is tools → system → messages, flattened to blocks (see `flatten.ts`).
 * - Each `cache_control` mark writes the prefix up to and including its block, keyed by the
 *   prefix bytes. A prefix below `minCacheableTokens` is not written.
 * - A mark reads the longest live written prefix that ends at the mark or at most
 *   `lookbackBlocks` (20) blocks before it, walking back from the mark.
 * - An entry lives `ttl` (5 min, or 1 h for `ttl: "1h"`) from its last write or read; a read
 *   refreshes it.
 * - Uncached input = everything after the written/read part.
 * Automatic prefix caching (OpenAI, Google, see cache-rules.ts), when the request carries such
 * a `cacheRule`: every prefix of a request at least `minCacheableTokens` long is cached; the
 * next request reads the longest live one it starts with, counted in `stepTokens` steps; the
 * newly cached part is a write only on providers that bill writes (`writePremium`), else it is
 * uncached input. Marks are ignored. Under either mechanism a rule with `writesReported: false`
 * counts what would be written as uncached input (a provider whose usage shows no writes).
 * Requests with different `cacheKey`s (models) never share entries, and a model switch is no bust.
 * Pure: `stepCache` is a reducer `(state, request) => {state, analysis}`, `analyzeRun` folds it.
 */
import { flattenRequest, type CacheLayer, type FlatBlock, type FlatBytesMemo } from "./flatten.ts";
import { findPairingViolations, type PairingViolation } from "./pairing.ts";
import { cacheableLength } from "./cache-rules.ts";
import { createPrefixHashMemo, keyedEmptyPrefix, prefixHashes, type PrefixHashMemo } from "./prefix-hash.ts";
import { billedEquivalent, DEFAULT_PRICING, ttlMsOf, type CachePricing } from "./pricing.ts";
import { createCharRatioEstimator, type TokenEstimator } from "./token-estimator.ts";
import type { RequestCacheRule, TimedRequest } from "./wire-types.ts";

export interface AnalyzerOptions {
  estimator: TokenEstimator;
  pricing: CachePricing;
  /** Prefixes shorter than this (estimated tokens) are never written. Default 1024. */
  minCacheableTokens: number;
  /** How far back (in blocks) a mark looks for an earlier written prefix. Default 20. */
  lookbackBlocks: number;
  /**
   * Older Claude models (≤ Sonnet 4.5, Haiku) drop thinking blocks of closed cycles (a user
   * text turn came after them) server-side: "dropped" counts them as 0 tokens (their bytes
   * still key the prefix). Default "billed".
   */
  closedCycleThinking: "billed" | "dropped";
  /**
   * Fixed tokens every request carries beyond its blocks (provider framing, an unknown prompt),
   * counted on the first block; from a per-session fit (estimator-fit.ts). Default 0.
   */
  promptOverheadTokens: number;
  /** Request indices before which every cache entry is dropped (restart, prompt change). */
  invalidateBefore: ReadonlySet<number>;
  /** Check every request's tool pairing (`pairingViolations`); false leaves the list empty (speed). Default true. */
  pairing?: boolean;
  /**
   * Optional memo shared by the steps of a run (or several runs over the same requests):
   * block digests and per-estimator block tokens. Speed only; results are identical.
   */
  memo?: AnalyzerMemo;
}

export interface AnalyzerMemo {
  hashes: PrefixHashMemo;
  tokens: WeakMap<TokenEstimator, Map<string, number>>;
  /** Canonical block bytes by block object: only for runs whose bodies are never mutated (the replay's). */
  bytes?: FlatBytesMemo;
}

export function createAnalyzerMemo(options: { bytes?: FlatBytesMemo } = {}): AnalyzerMemo {
  return { hashes: createPrefixHashMemo(), tokens: new WeakMap(), ...(options.bytes ? { bytes: options.bytes } : {}) };
}

export const DEFAULT_ANALYZER_OPTIONS: AnalyzerOptions = {
  estimator: createCharRatioEstimator(),
  pricing: DEFAULT_PRICING,
  minCacheableTokens: 1024,
  lookbackBlocks: 20,
  closedCycleThinking: "billed",
  promptOverheadTokens: 0,
  invalidateBefore: new Set(),
};

export interface CacheEntry {
  hash: string;
  tokens: number;
  ttlMs: number;
  lastTouched: number;
}

export interface CacheState {
  entries: ReadonlyMap<string, CacheEntry>;
  /** The previous request's prefix hashes and its longest marked (written or read) prefix. */
  previous?: { hashes: readonly string[]; blocks: readonly FlatBlock[]; longestMarked?: { hash: string; tokens: number }; cacheKey?: string };
  requestIndex: number;
}

export const EMPTY_CACHE_STATE: CacheState = { entries: new Map(), requestIndex: 0 };

export interface Divergence {
  blockIndex: number;
  layer: CacheLayer;
  messageIndex: number;
}

export interface RequestAnalysis {
  index: number;
  timestamp: number;
  blockTokens: number[];
  /** Cumulative tokens: prefixTokens[i] = tokens of blocks 0..i. */
  prefixTokens: number[];
  totalTokens: number;
  markCount: number;
  tooManyMarks: boolean;
  /** Marked prefixes: block index, tokens, whether written by this request. */
  marks: Array<{ blockIndex: number; tokens: number; ttlMs: number; written: boolean; hash: string }>;
  /** Last block index of the prefix read from cache, -1 for none. */
  readEnd: number;
  read: number;
  write5m: number;
  write1h: number;
  write: number;
  uncached: number;
  output: number;
  cost: number;
  invalidated: boolean;
  bust: boolean;
  /** Where this request first differs from the previous one (present when it differs). */
  divergence?: Divergence;
  pairingViolations: PairingViolation[];
}

export function closedCycleBoundary(blocks: readonly FlatBlock[]): number {
  // Message index of the last user message that carries a non-tool_result block.
  let last = -1;
  for (const b of blocks) if (b.layer === "messages" && b.role === "user" && b.type !== "tool_result") last = b.messageIndex;
  return last;
}

function estimateBlocks(blocks: readonly FlatBlock[], o: AnalyzerOptions, request: TimedRequest): number[] {
  const boundary = o.closedCycleThinking === "dropped" ? closedCycleBoundary(blocks) : -1;
  const estimator = request.estimator ?? o.estimator;
  let memo: Map<string, number> | undefined;
  if (o.memo) {
    memo = o.memo.tokens.get(estimator);
    if (!memo) o.memo.tokens.set(estimator, (memo = new Map()));
  }
  const overhead = Math.max(0, Math.round(request.promptOverheadTokens ?? o.promptOverheadTokens));
  return blocks.map((b, i) => {
    if ((b.type === "thinking" || b.type === "redacted_thinking") && b.messageIndex < boundary) return i === 0 ? overhead : 0;
    let n = memo?.get(b.bytes);
    if (n === undefined) {
      n = estimator(b);
      memo?.set(b.bytes, n);
    }
    return i === 0 ? n + overhead : n;
  });
}

/**
 * The prompt tokens of one request as `stepCache` counts them (its blocks under the request's
 * or the options' estimator, closed-cycle thinking as the options say, the fixed overhead): its
 * `totalTokens`, without the cache. What a provider would report as the request's input.
 */
export function requestPromptTokens(request: TimedRequest, options: Partial<AnalyzerOptions> = {}): number {
  const o: AnalyzerOptions = { ...DEFAULT_ANALYZER_OPTIONS, ...options };
  return estimateBlocks(flattenRequest(request.body, o.memo?.bytes), o, request).reduce((n, t) => n + t, 0);
}

function firstDivergence(prev: CacheState["previous"], hashes: readonly string[], blocks: readonly FlatBlock[]): Divergence | undefined {
  if (!prev) return undefined;
  const n = Math.min(prev.hashes.length, hashes.length);
  let i = 0;
  while (i < n && prev.hashes[i] === hashes[i]) i++;
  if (i === prev.hashes.length) return undefined; // same prompt or pure growth
  const at = i < blocks.length ? blocks[i] : prev.blocks[i];
  return { blockIndex: i, layer: at.layer, messageIndex: at.messageIndex };
}

export function stepCache(
  state: CacheState,
  request: TimedRequest,
  options: Partial<AnalyzerOptions> = {},
): { state: CacheState; analysis: RequestAnalysis } {
  const o: AnalyzerOptions = { ...DEFAULT_ANALYZER_OPTIONS, ...options };
  const t = request.timestamp;
  const index = state.requestIndex;
  const blocks = flattenRequest(request.body, o.memo?.bytes);
  const hashes = prefixHashes(blocks, o.memo?.hashes, keyedEmptyPrefix(request.cacheKey));
  const blockTokens = estimateBlocks(blocks, o, request);
  const prefixTokens: number[] = [];
  blockTokens.reduce((acc, n, i) => (prefixTokens[i] = acc + n), 0);
  const totalTokens = prefixTokens.length ? prefixTokens[prefixTokens.length - 1] : 0;

  const invalidated = o.invalidateBefore.has(index);
  const sameCache = state.previous?.cacheKey === request.cacheKey;
  const entries = new Map<string, CacheEntry>();
  if (!invalidated) for (const [h, e] of state.entries) if (t - e.lastTouched <= e.ttlMs) entries.set(h, e);

  const rule = request.cacheRule;
  const stepped =
    rule?.mechanism === "automatic-prefix"
      ? automaticPrefixStep({ entries, hashes, prefixTokens, totalTokens, t, rule })
      : explicitMarksStep({ entries, blocks, hashes, prefixTokens, t, minCacheableTokens: rule?.minCacheableTokens ?? o.minCacheableTokens, lookbackBlocks: rule?.lookbackBlocks ?? o.lookbackBlocks });
  const { readEnd, read, marks } = stepped;
  // A provider that reports no writes bills the newly cached part as plain input.
  const writesShown = rule?.writesReported !== false;
  const write5m = writesShown ? stepped.write5m : 0;
  const write1h = writesShown ? stepped.write1h : 0;
  const markIdx = marks.map((m) => m.blockIndex);
  const write = write5m + write1h;
  const uncached = totalTokens - read - write;
  const output = request.outputTokens ?? 0;

  // Bust: the previous request's longest marked prefix is alive now but was not read.
  const prevLongest = state.previous?.longestMarked;
  const readHashes = new Set(hashes.slice(0, readEnd + 1));
  const bust = !!prevLongest && sameCache && !invalidated && isAlive(state.entries.get(prevLongest.hash), t) && !readHashes.has(prevLongest.hash);

  const longestMarkedIdx = stepped.longestCached ?? [...marks].reverse().find((m) => entries.has(m.hash));
  const analysis: RequestAnalysis = {
    index,
    timestamp: t,
    blockTokens,
    prefixTokens,
    totalTokens,
    markCount: markIdx.length,
    tooManyMarks: markIdx.length > 4,
    marks,
    readEnd,
    read,
    write5m,
    write1h,
    write,
    uncached,
    output,
    cost: billedEquivalent({ uncached, write5m, write1h, read, output }, request.pricing ?? o.pricing),
    invalidated,
    bust,
    pairingViolations: o.pairing === false ? [] : findPairingViolations(request.body.messages),
  };
  const divergence = firstDivergence(state.previous, hashes, blocks);
  if (divergence) analysis.divergence = divergence;
  return {
    state: {
      entries,
      requestIndex: index + 1,
      previous: {
        hashes,
        blocks,
        ...(longestMarkedIdx ? { longestMarked: { hash: longestMarkedIdx.hash, tokens: longestMarkedIdx.tokens } } : {}),
        ...(request.cacheKey !== undefined ? { cacheKey: request.cacheKey } : {}),
      },
    },
    analysis,
  };
}

type Marks = RequestAnalysis["marks"];

interface StepResult {
  readEnd: number;
  read: number;
  write5m: number;
  write1h: number;
  marks: Marks;
  /** Automatic prefix caching: the longest prefix this request left in the cache. */
  longestCached?: { hash: string; tokens: number };
}

/** Anthropic: reads and writes at the marks (`entries` is updated in place). */
function explicitMarksStep(a: {
  entries: Map<string, CacheEntry>;
  blocks: readonly FlatBlock[];
  hashes: readonly string[];
  prefixTokens: readonly number[];
  t: number;
  minCacheableTokens: number;
  lookbackBlocks: number;
}): StepResult {
  const { entries, blocks, hashes, prefixTokens, t } = a;
  const markIdx = blocks.flatMap((b, i) => (b.mark ? [i] : []));
  // Reads: each mark walks back from itself at most lookbackBlocks blocks.
  let readEnd = -1;
  for (const m of markIdx) {
    for (let p = m; p >= Math.max(0, m - a.lookbackBlocks); p--) {
      const hit = entries.get(hashes[p]);
      if (hit) {
        entries.set(hit.hash, { ...hit, lastTouched: t });
        readEnd = Math.max(readEnd, p);
        break;
      }
    }
  }
  const read = readEnd >= 0 ? prefixTokens[readEnd] : 0;

  // Writes: marked prefixes beyond the read part, each segment at its mark's TTL rate.
  let write5m = 0;
  let write1h = 0;
  let coveredEnd = readEnd;
  const marks: RequestAnalysis["marks"] = [];
  for (const m of markIdx) {
    const ttlMs = ttlMsOf(blocks[m].mark!);
    const tokens = prefixTokens[m];
    const existing = entries.get(hashes[m]);
    let written = false;
    if (existing) entries.set(existing.hash, { ...existing, lastTouched: t });
    else if (tokens >= a.minCacheableTokens) {
      entries.set(hashes[m], { hash: hashes[m], tokens, ttlMs, lastTouched: t });
      if (m > coveredEnd) {
        const seg = tokens - (coveredEnd >= 0 ? prefixTokens[coveredEnd] : 0);
        if (ttlMs > ttlMsOf({})) write1h += seg;
        else write5m += seg;
        coveredEnd = m;
        written = true;
      }
    }
    marks.push({ blockIndex: m, tokens, ttlMs, written, hash: hashes[m] });
  }
  return { readEnd, read, write5m, write1h, marks };
}

/** Automatic prefix caching (`entries` is updated in place). */
function automaticPrefixStep(a: {
  entries: Map<string, CacheEntry>;
  hashes: readonly string[];
  prefixTokens: readonly number[];
  totalTokens: number;
  t: number;
  rule: RequestCacheRule;
}): StepResult {
  const { entries, hashes, prefixTokens, t, rule } = a;
  let matchEnd = -1;
  for (let p = hashes.length - 1; p >= 0; p--) {
    if (entries.has(hashes[p])) {
      matchEnd = p;
      break;
    }
  }
  const read = matchEnd >= 0 ? cacheableLength(prefixTokens[matchEnd], rule) : 0;
  const cachedAfter = Math.max(read, cacheableLength(a.totalTokens, rule));
  const write = rule.writePremium ? cachedAfter - read : 0;
  let longestCached: StepResult["longestCached"];
  for (let i = 0; i < hashes.length; i++) {
    if (prefixTokens[i] < rule.minCacheableTokens) continue;
    entries.set(hashes[i], { hash: hashes[i], tokens: prefixTokens[i], ttlMs: rule.ttlMs, lastTouched: t });
    longestCached = { hash: hashes[i], tokens: prefixTokens[i] };
  }
  return { readEnd: read > 0 ? matchEnd : -1, read, write5m: write, write1h: 0, marks: [], ...(longestCached ? { longestCached } : {}) };
}

function isAlive(entry: CacheEntry | undefined, t: number): boolean {
  return !!entry && t - entry.lastTouched <= entry.ttlMs;
}

export function analyzeRun(requests: readonly TimedRequest[], options: Partial<AnalyzerOptions> = {}): RequestAnalysis[] {
  if (!options.memo) options = { ...options, memo: createAnalyzerMemo() };
  let state = EMPTY_CACHE_STATE;
  const out: RequestAnalysis[] = [];
  for (const r of requests) {
    const step = stepCache(state, r, options);
    state = step.state;
    out.push(step.analysis);
  }
  return out;
}
