/**
 * A simple prompt-cache model so the fake server's usage numbers look plausible.
 * (The project's real cache analyzer lives in src/cache/; this is only the fake provider.)
 *
 * Model:
 * - The request is flattened to blocks in Anthropic's cache order: each tool, each system block,
 *   then each content block of each message (a string content is one text block). A block's
 *   size is ceil(chars of its JSON without `cache_control` / 4) tokens.
 * - Prefix identity: a hash chain over the blocks, seeded with the model; the message part also
 *   folds in the `thinking` config (changing it invalidates the messages cache, as on Anthropic).
 * - Writes: every block carrying `cache_control` is a breakpoint. The prefix ending there is
 *   stored (TTL 5 min, or 1 h for `ttl: "1h"`) when it is at least `minCacheableTokens` long.
 * - Reads: for each breakpoint, look back over at most `lookbackBlocks` (20) block positions,
 *   nearest first, for a stored, unexpired prefix; the longest such hit is `cache_read`.
 * - cache_creation = (prefix up to the furthest storable breakpoint) − cache_read, floored at 0;
 *   input_tokens = total − cache_read − cache_creation.
 */
import { createHash } from "node:crypto";
import type { WireBlock, WireRequest, WireUsage } from "./types.ts";

export type CacheEntry = { tokens: number; expiresAtMs: number };
export type CacheState = ReadonlyMap<string, CacheEntry>;

export type UsagePlan = {
  usage: Pick<WireUsage, "input_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens">;
  totalTokens: number;
  /** Entries to put into (or refresh in) the cache after this request. */
  store: Array<[string, CacheEntry]>;
};

export type PlanUsageOptions = {
  body: WireRequest;
  cache: CacheState;
  nowMs: number;
  /** Prefixes shorter than this are never cached (Anthropic: 1024 for Sonnet/Opus). */
  minCacheableTokens?: number;
  /**
   * How message blocks are counted: "json" (default) each block's JSON / 4; "text" Pi's own
   * estimate of a message — the characters a model reads in it (the text, thinking, a tool
   * call's name and arguments, a result's text, an image 4800) / 4, rounded up per message
   * (each tool result is a message of its own) — so Pi's usage and its estimate agree.
   */
  tokenizer?: "json" | "text";
  lookbackBlocks?: number;
};

const FIVE_MINUTES_MS = 5 * 60_000;
const ONE_HOUR_MS = 60 * 60_000;

export function tokensOfText(s: string): number {
  return Math.ceil(s.length / 4);
}

type FlatBlock = { key: string; tokens: number; ttlMs?: number };

function withoutCacheControl(block: Record<string, unknown>): string {
  const { cache_control: _drop, ...rest } = block;
  return JSON.stringify(rest);
}

function ttlOf(mark: { ttl?: string } | undefined): number | undefined {
  if (!mark) return undefined;
  return mark.ttl === "1h" ? ONE_HOUR_MS : FIVE_MINUTES_MS;
}

/** The characters a model reads in a message block (the "text" tokenizer). */
function readChars(b: WireBlock): number {
  const x = b as { type?: string; text?: string; thinking?: string; name?: string; input?: unknown; content?: unknown };
  if (x.type === "text") return (x.text ?? "").length;
  if (x.type === "thinking") return (x.thinking ?? "").length;
  if (x.type === "tool_use") return (x.name ?? "").length + JSON.stringify(x.input ?? {}).length;
  if (x.type === "image") return 4800;
  if (x.type === "tool_result") return typeof x.content === "string" ? x.content.length : Array.isArray(x.content) ? x.content.reduce((n: number, c: WireBlock) => n + readChars(c), 0) : 0;
  return 0;
}

function flatten(body: WireRequest, tokenizer: "json" | "text" = "json"): FlatBlock[] {
  const out: FlatBlock[] = [];
  const push = (key: string, json: string, mark: { ttl?: string } | undefined, textTokens?: number) =>
    out.push({ key, tokens: textTokens ?? tokensOfText(json), ttlMs: ttlOf(mark) });
  for (const tool of body.tools ?? []) {
    const json = withoutCacheControl(tool);
    push(`tool:${json}`, json, tool.cache_control);
  }
  const system: WireBlock[] = typeof body.system === "string" ? [{ type: "text", text: body.system }] : (body.system ?? []);
  for (const b of system) {
    const json = withoutCacheControl(b);
    push(`system:${json}`, json, b.cache_control);
  }
  let first = true;
  body.messages.forEach((m, i) => {
    const blocks: WireBlock[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    // "text": a tool result counts alone; the message's other blocks together, on the last of them.
    const rest = blocks.filter((b) => b.type !== "tool_result");
    const restTokens = Math.ceil(rest.reduce((n, b) => n + readChars(b), 0) / 4);
    blocks.forEach((b, j) => {
      const json = withoutCacheControl(b);
      const thinking = first ? `thinking=${JSON.stringify(body.thinking ?? null)}|` : "";
      first = false;
      const text = b.type === "tool_result" ? Math.ceil(readChars(b) / 4) : b === rest[rest.length - 1] ? restTokens : 0;
      push(`${thinking}msg${i}:${m.role}:${j}:${json}`, json, b.cache_control, tokenizer === "text" ? text : undefined);
    });
  });
  return out;
}

export function planUsage(opts: PlanUsageOptions): UsagePlan {
  const min = opts.minCacheableTokens ?? 1024;
  const lookback = opts.lookbackBlocks ?? 20;
  const blocks = flatten(opts.body, opts.tokenizer);
  const hashes: string[] = [];
  const cumulative: number[] = [];
  let h = createHash("sha1").update(`model:${opts.body.model ?? ""}`).digest("hex");
  let sum = 0;
  for (const b of blocks) {
    h = createHash("sha1").update(h).update(b.key).digest("hex");
    sum += b.tokens;
    hashes.push(h);
    cumulative.push(sum);
  }
  const live = (hash: string) => {
    const e = opts.cache.get(hash);
    return e !== undefined && e.expiresAtMs > opts.nowMs ? e : undefined;
  };
  const breakpoints = blocks.flatMap((b, i) => (b.ttlMs !== undefined ? [i] : []));
  let read = 0;
  let hitHash: string | undefined;
  for (const bp of breakpoints) {
    for (let p = bp; p >= 0 && p > bp - lookback; p--) {
      if (!live(hashes[p])) continue;
      if (cumulative[p] > read) {
        read = cumulative[p];
        hitHash = hashes[p];
      }
      break;
    }
  }
  const store: Array<[string, CacheEntry]> = [];
  let furthest = 0;
  for (const bp of breakpoints) {
    if (cumulative[bp] < min) continue;
    store.push([hashes[bp], { tokens: cumulative[bp], expiresAtMs: opts.nowMs + (blocks[bp].ttlMs ?? FIVE_MINUTES_MS) }]);
    furthest = Math.max(furthest, cumulative[bp]);
  }
  if (hitHash) {
    const hit = live(hitHash)!;
    const refreshed = Math.max(hit.expiresAtMs, opts.nowMs + FIVE_MINUTES_MS);
    if (!store.some(([k]) => k === hitHash)) store.push([hitHash, { tokens: hit.tokens, expiresAtMs: refreshed }]);
  }
  const write = Math.max(0, furthest - read);
  return {
    usage: { input_tokens: sum - read - write, cache_read_input_tokens: read, cache_creation_input_tokens: write },
    totalTokens: sum,
    store,
  };
}
