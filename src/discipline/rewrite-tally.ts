/**
 * Totals since this extension started in the session, for `/keeper cache`: requests seen,
 * cache rewrites by cause (the bust list itself is a short ring), and what became of each
 * flush that changed history (`stats.rewritesCaused`) on the wire — it re-wrote cached
 * history (a `keeper-rewrite` bust), it landed on a request whose cache was lost anyway (TTL,
 * model, thinking, tools, system: free), it did not touch anything the provider had cached
 * (the request still extended the previous one), it went out with the first request (nothing
 * to compare with), or no request has carried it yet. A reducer over plain data.
 */
import type { BustCause } from "./schema.ts";

export interface RewriteTally {
  /** Requests sent (warm-up pings excluded). */
  requests: number;
  /** Requests compared with the one before (all but the first). */
  compared: number;
  /** Compared requests that had to write cached history again, and those this extension caused. */
  busts: number;
  keeperBusts: number;
  /** Estimated cost of the keeper's busts, in tok-eq (the price of one uncached input token). */
  keeperBustCost: number;
  /** Flush rewrites recorded. */
  recorded: number;
  /** Recorded, no request sent since. */
  pending: number;
  /** Reached the wire as a `keeper-rewrite` bust. */
  billed: number;
  /** Reached the wire on a request whose cache was already lost for another reason. */
  free: number;
  /** Reached the wire without changing a cached byte (the request extended the previous one). */
  uncached: number;
  /** Reached the wire on the first request (nothing to compare with). */
  unobserved: number;
}

export function emptyRewriteTally(): RewriteTally {
  return { requests: 0, compared: 0, busts: 0, keeperBusts: 0, keeperBustCost: 0, recorded: 0, pending: 0, billed: 0, free: 0, uncached: 0, unobserved: 0 };
}

export function tallyFlushRewrite(tally: RewriteTally): RewriteTally {
  return { ...tally, recorded: tally.recorded + 1, pending: tally.pending + 1 };
}

/**
 * A request went out. `verdict` is its bust attribution, undefined when there was no earlier
 * request to compare with. Every pending rewrite rides on this request.
 */
export function tallyRequest(tally: RewriteTally, verdict: { cause: BustCause; estimatedCost: number } | undefined): RewriteTally {
  const cause = verdict?.cause;
  const bust = cause !== undefined && cause !== "none";
  const ours = cause === "keeper-rewrite" || (cause === "unknown" && tally.pending > 0);
  const next: RewriteTally = {
    ...tally,
    requests: tally.requests + 1,
    compared: tally.compared + (verdict ? 1 : 0),
    busts: tally.busts + (bust ? 1 : 0),
    keeperBusts: tally.keeperBusts + (ours ? 1 : 0),
    keeperBustCost: tally.keeperBustCost + (ours ? verdict!.estimatedCost : 0),
    pending: 0,
  };
  const n = tally.pending;
  if (n === 0) return next;
  if (cause === undefined) return { ...next, unobserved: tally.unobserved + n };
  if (ours) return { ...next, billed: tally.billed + n };
  if (cause === "none") return { ...next, uncached: tally.uncached + n };
  return { ...next, free: tally.free + n };
}
