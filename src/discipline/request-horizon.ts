/**
 * How many requests will still read a prefix written now: the N in the gate.
 *
 * Estimator (documented in doc/cache-discipline.md):
 * - Lindy: a session that has made n requests is, with no other knowledge, as likely as not to
 *   make about n more. Future requests F = min(cap, n).
 * - Those requests only read the cache while the chain of gaps stays under the TTL; the first
 *   gap longer than the TTL loses the entry, and a reduction made now earns nothing after it
 *   (the prefix is re-written anyway). The chance a gap stays warm is the smoothed share of
 *   warm gaps seen so far: q = (warmGaps + 1) / (gaps + 2) (Laplace's rule, so a short history
 *   is neither certain nor hopeless).
 * - Expected warm reads among the F: q + q² + … + q^F = q(1 − q^F)/(1 − q).
 * - N = 1 (the request about to be sent) + that sum.
 * - Unannounced losses (observed-loss.ts) do not end the horizon: nothing is applied at them
 *   (they are not foreseen), so a waiting removal is written there instead of read; the gate
 *   prices that per request.
 */

export interface RequestHorizonInput {
  /** Send times (ms) of this session's main-loop requests so far, oldest first (no warm-up pings). */
  requestTimes: readonly number[];
  /** Lifetime of the cache entry (5 min, or 1 h with long retention). */
  ttlMs: number;
  /** Most future requests ever counted; default 30. */
  cap?: number;
}

export interface RequestHorizon {
  /** N: the request about to be sent plus the expected warm reads after it. */
  expectedRequests: number;
  /** F = min(cap, requests so far). */
  lindyFuture: number;
  /** q = (warmGaps + 1) / (gaps + 2). */
  warmGapChance: number;
  gaps: number;
  warmGaps: number;
}

export const DEFAULT_HORIZON_CAP = 30;

export function estimateRequestHorizon(input: RequestHorizonInput): RequestHorizon {
  const times = input.requestTimes;
  const cap = Math.max(0, input.cap ?? DEFAULT_HORIZON_CAP);
  let gaps = 0;
  let warmGaps = 0;
  for (let i = 1; i < times.length; i++) {
    gaps++;
    if (times[i] - times[i - 1] <= input.ttlMs) warmGaps++;
  }
  const q = (warmGaps + 1) / (gaps + 2);
  const lindyFuture = Math.min(cap, times.length);
  // q < 1 always (smoothing), so the closed form is safe.
  const warmReads = (q * (1 - q ** lindyFuture)) / (1 - q);
  return { expectedRequests: 1 + warmReads, lindyFuture, warmGapChance: q, gaps, warmGaps };
}
