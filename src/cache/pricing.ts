/**
 * Billed-equivalent cost in units of one uncached input token.
 * Anthropic: cache write 1.25× (5-minute TTL) or 2× (1-hour TTL), cache read 0.1×,
 * output about 5× input.
 */
export interface CachePricing {
  uncached: number;
  write5m: number;
  write1h: number;
  read: number;
  output: number;
}

export const DEFAULT_PRICING: CachePricing = { uncached: 1, write5m: 1.25, write1h: 2, read: 0.1, output: 5 };

export interface TokenBreakdown {
  uncached: number;
  write5m: number;
  write1h: number;
  read: number;
  output: number;
}

export function billedEquivalent(t: TokenBreakdown, pricing: CachePricing = DEFAULT_PRICING): number {
  return (
    t.uncached * pricing.uncached +
    t.write5m * pricing.write5m +
    t.write1h * pricing.write1h +
    t.read * pricing.read +
    t.output * pricing.output
  );
}

export const TTL_5M_MS = 5 * 60 * 1000;
export const TTL_1H_MS = 60 * 60 * 1000;

export function ttlMsOf(mark: { ttl?: string }): number {
  return mark.ttl === "1h" ? TTL_1H_MS : TTL_5M_MS;
}
