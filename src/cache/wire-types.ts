/**
 * The subset of an Anthropic Messages request body the cache analyzer reads.
 *
 * These are plain JSON shapes (what Pi puts on the wire), not Pi's in-memory message types.
 * Unknown fields are tolerated: they take part in the prefix bytes but not in the token
 * estimate unless the estimator knows them.
 */
import type { FlatBlock as FlatBlockLike } from "./flatten.ts";
import type { CachePricing } from "./pricing.ts";

/** A `cache_control` mark. `ttl` absent means the 5-minute default. */
export interface WireCacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

export interface WireTextBlock {
  type: "text";
  text: string;
  cache_control?: WireCacheControl;
}

export interface WireImageBlock {
  type: "image";
  source: { type: string; media_type?: string; data?: string; url?: string };
  cache_control?: WireCacheControl;
}

export interface WireThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
  cache_control?: WireCacheControl;
}

export interface WireRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
  cache_control?: WireCacheControl;
}

export interface WireToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  cache_control?: WireCacheControl;
}

export interface WireToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string | Array<WireTextBlock | WireImageBlock>;
  is_error?: boolean;
  cache_control?: WireCacheControl;
}

/** Any other block type: only its bytes count. */
export interface WireOtherBlock {
  type: string;
  cache_control?: WireCacheControl;
  [key: string]: unknown;
}

export type WireContentBlock =
  | WireTextBlock
  | WireImageBlock
  | WireThinkingBlock
  | WireRedactedThinkingBlock
  | WireToolUseBlock
  | WireToolResultBlock;

export interface WireMessage {
  role: "user" | "assistant" | "system";
  content: string | Array<WireContentBlock | WireOtherBlock>;
}

export interface WireTool {
  name: string;
  description?: string;
  input_schema?: unknown;
  cache_control?: WireCacheControl;
  [key: string]: unknown;
}

export interface WireRequestBody {
  model?: string;
  tools?: WireTool[];
  system?: string | WireTextBlock[];
  messages: WireMessage[];
  [key: string]: unknown;
}

/** One request as the analyzer consumes it. */
export interface TimedRequest {
  body: WireRequestBody;
  /** When the request was sent, ms since epoch. */
  timestamp: number;
  /** Output tokens of the answer, when known (only used for cost). */
  outputTokens?: number;
  /**
   * The provider's cache rule for this request (cache-rules.ts); absent: the analyzer's
   * options (Anthropic explicit marks).
   */
  cacheRule?: RequestCacheRule;
  /**
   * Which cache the request reads and writes (the model: providers keep one cache per model).
   * Requests with different keys never share entries; absent: one shared cache.
   */
  cacheKey?: string;
  /** Price ratios of this request's model (cost-model.ts); absent: the analyzer's `pricing`. */
  pricing?: CachePricing;
  /** Token estimator for this request's blocks (a per-model-family fit); absent: the analyzer's. */
  estimator?: (block: FlatBlockLike) => number;
  /** Fixed tokens this request carries beyond its blocks; absent: the analyzer's `promptOverheadTokens`. */
  promptOverheadTokens?: number;
}

/** The parts of a `CacheRule` the analyzer needs, with the request's lifetime resolved. */
export interface RequestCacheRule {
  mechanism: "explicit-marks" | "automatic-prefix";
  minCacheableTokens: number;
  stepTokens: number;
  lookbackBlocks: number;
  /** Lifetime of an entry written or read by this request (automatic prefix caching). */
  ttlMs: number;
  writePremium: boolean;
  /** False: the provider reports the newly cached part as plain input, not as a cache write (a recording without writes shows it). Default true. */
  writesReported?: boolean;
}
