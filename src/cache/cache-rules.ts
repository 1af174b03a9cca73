/**
 * One prompt-cache rule per provider API: how the provider decides what a request reads from
 * its cache, what it writes, how long an entry lives, and whether a write costs more than
 * plain input. Pure data; `cacheRuleFor` picks the rule for a model reference.
 *
 * - Anthropic Messages (`anthropic-messages`): explicit `cache_control` marks, at most 4 per
 *   request; a mark looks back about 20 blocks for an earlier written prefix; entries live
 *   5 minutes (1 hour with `ttl: "1h"`, Pi's `PI_CACHE_RETENTION=long`), a hit refreshes them;
 *   below the model's minimum cacheable length nothing is written (4096 tokens for Opus 4.5+
 *   and Haiku 4.5+, 2048 for the Haiku 3 family, 1024 otherwise); a write costs more than
 *   input (1.25× for 5 minutes, 2× for 1 hour). The seam mark is only placed here.
 * - OpenAI Responses / Codex Responses / Chat Completions (`openai-responses`,
 *   `azure-openai-responses`, `openai-codex-responses`, `openai-completions`): automatic
 *   prefix caching with no marks; prompts below 1024 tokens are never cached, hits are counted
 *   in 128-token steps from 1024 on; in-memory retention is about 5–10 minutes of inactivity
 *   (10 minutes here), 24 hours with extended retention (`prompt_cache_retention: "24h"`,
 *   Pi's long retention). Writes carry no premium (billed as plain input) unless the model's
 *   price lists a cache-write price (the newer models in pi-ai's registry do): then pi-ai
 *   reports `cache_write_tokens` as `cacheWrite` and the newly cached part is billed at it.
 * - Google (`google-generative-ai`, `google-vertex`): implicit caching of repeated prefixes
 *   (Gemini 2.5+), no marks and no write premium; minimum 1024 tokens (4096 for Pro models);
 *   the lifetime is not documented, 5 minutes is assumed.
 * - Bedrock Converse (`bedrock-converse-stream`): explicit cache points like Anthropic's
 *   (at most 4, 5 minutes, 1 hour for long retention on the models that support it); the write
 *   premium follows the model's price (Claude on Bedrock has one, Nova does not).
 * - Anything else: automatic prefix caching with the OpenAI-compatible numbers (most
 *   OpenAI-compatible servers cache that way), no write premium unless priced.
 */
export type CacheMechanism = "explicit-marks" | "automatic-prefix";

export type CacheFamily = "anthropic" | "openai" | "google" | "bedrock" | "other";

export interface CacheRule {
  family: CacheFamily;
  /** Short human label, e.g. "Anthropic Messages: explicit cache marks". */
  label: string;
  mechanism: CacheMechanism;
  /** Most marks a request may carry (explicit marks only). */
  maxMarks: number | null;
  /** How far back (blocks) a mark looks for an earlier written prefix (explicit marks only). */
  lookbackBlocks: number;
  /** Prefixes shorter than this (tokens) are never cached. */
  minCacheableTokens: number;
  /** Cached lengths are counted in steps of this many tokens above the minimum (1 = exact). */
  stepTokens: number;
  /** Lifetime of an entry since its last use, ms: default and long retention. */
  ttlMs: { short: number; long: number };
  /** The provider bills (and reports) the newly cached part as a cache write above input price. */
  writePremium: boolean;
  /** False: writes show in usage as plain input (set by the report when a recording shows no cache writes). Default true. */
  writesReported?: boolean;
  /** The keeper may place its seam mark (Anthropic only). */
  seamMark: boolean;
}

export interface ModelRef {
  provider: string;
  api: string;
  /** Model id. */
  model: string;
}

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;

const OPENAI_APIS = new Set(["openai-responses", "azure-openai-responses", "openai-codex-responses", "openai-completions"]);
const GOOGLE_APIS = new Set(["google-generative-ai", "google-vertex"]);

/**
 * Anthropic's minimum cacheable prompt length for a model id: 4096 for Opus 4.5+ and Haiku 4.5+
 * (and later generations), 2048 for older Haiku, 1024 otherwise. The seam (discipline/seam-target.ts)
 * uses the same function.
 */
export function anthropicMinCacheableTokens(model: string): number {
  const id = model.toLowerCase();
  if (/opus-4-[5-9]|haiku-4-[5-9]|(opus|haiku)-([5-9]|\d\d)(?!\d{3})/.test(id)) return 4096;
  if (id.includes("haiku")) return 2048;
  return 1024;
}

export interface CacheRuleOptions {
  /** The model's price lists a cache-write price (> 0): the provider bills writes separately. */
  pricedWrites?: boolean;
  /** The model's own cache lifetimes from pi-ai's registry (`promptCache`, seconds). */
  promptCache?: { short?: number; long?: number };
}

function lifetimes(defaults: { short: number; long: number }, promptCache: CacheRuleOptions["promptCache"]): { short: number; long: number } {
  return {
    short: promptCache?.short && promptCache.short > 0 ? promptCache.short * 1000 : defaults.short,
    long: promptCache?.long && promptCache.long > 0 ? promptCache.long * 1000 : defaults.long,
  };
}

export function cacheRuleFor(ref: ModelRef, options: CacheRuleOptions = {}): CacheRule {
  const pricedWrites = options.pricedWrites === true;
  if (ref.api === "anthropic-messages") {
    return {
      family: "anthropic",
      label: "Anthropic Messages: explicit cache marks, writes 1.25× (5 min) / 2× (1 h)",
      mechanism: "explicit-marks",
      maxMarks: 4,
      lookbackBlocks: 20,
      minCacheableTokens: anthropicMinCacheableTokens(ref.model),
      stepTokens: 1,
      ttlMs: lifetimes({ short: 5 * MINUTE, long: HOUR }, options.promptCache),
      writePremium: true,
      seamMark: true,
    };
  }
  if (ref.api === "bedrock-converse-stream") {
    return {
      family: "bedrock",
      label: `Bedrock Converse: explicit cache points, ${pricedWrites ? "writes priced above input" : "no write premium"}`,
      mechanism: "explicit-marks",
      maxMarks: 4,
      lookbackBlocks: 20,
      minCacheableTokens: /claude/i.test(ref.model) ? anthropicMinCacheableTokens(ref.model) : 1024,
      stepTokens: 1,
      ttlMs: lifetimes({ short: 5 * MINUTE, long: HOUR }, options.promptCache),
      writePremium: pricedWrites,
      seamMark: false,
    };
  }
  if (GOOGLE_APIS.has(ref.api)) {
    return {
      family: "google",
      label: "Google: implicit prefix caching, no write premium",
      mechanism: "automatic-prefix",
      maxMarks: null,
      lookbackBlocks: 0,
      minCacheableTokens: /pro/i.test(ref.model) ? 4096 : 1024,
      stepTokens: 1,
      ttlMs: lifetimes({ short: 5 * MINUTE, long: 5 * MINUTE }, options.promptCache),
      writePremium: false,
      seamMark: false,
    };
  }
  const openai = OPENAI_APIS.has(ref.api);
  return {
    family: openai ? "openai" : "other",
    label: `${openai ? "OpenAI" : ref.api || "unknown API"}: automatic prefix caching (≥ 1024 tokens, 128-token steps), ${pricedWrites ? "writes priced above input" : "no write premium"}`,
    mechanism: "automatic-prefix",
    maxMarks: null,
    lookbackBlocks: 0,
    minCacheableTokens: 1024,
    stepTokens: 128,
    ttlMs: lifetimes({ short: 10 * MINUTE, long: 24 * HOUR }, options.promptCache),
    writePremium: pricedWrites,
    seamMark: false,
  };
}

/**
 * The cached length an automatic-prefix provider reports for a matching prefix of `tokens`:
 * 0 below the minimum, else rounded down to the rule's step above the minimum.
 */
export function cacheableLength(tokens: number, rule: Pick<CacheRule, "minCacheableTokens" | "stepTokens">): number {
  if (tokens < rule.minCacheableTokens) return 0;
  const step = Math.max(1, rule.stepTokens);
  return rule.minCacheableTokens + Math.floor((tokens - rule.minCacheableTokens) / step) * step;
}

export function ruleTtlMs(rule: Pick<CacheRule, "ttlMs">, longRetention: boolean): number {
  return longRetention ? rule.ttlMs.long : rule.ttlMs.short;
}
