/**
 * What became of each flush that changed history (`stats.rewritesCaused`), seen from the
 * wire: it showed up as a cache rewrite this extension caused (billed), it fell on a request
 * whose cache was lost anyway (TTL, model, thinking, tools, system: free), the change did not
 * touch anything the provider had cached (the request still extended the previous one), or
 * no request has carried it yet. `/keeper cache` reconciles its bust list with the stats
 * through this tally. A reducer over plain data.
 */
import type { BustCause } from "./schema.ts";

export interface RewriteTally {
  /** Flush rewrites recorded since this Pi process started (or the session was restored). */
  recorded: number;
  /** Recorded, no request sent since. */
  pending: number;
  /** Reached the wire as a `keeper-rewrite` bust. */
  billed: number;
  /** Reached the wire on a request whose cache was already lost for another reason. */
  free: number;
  /** Reached the wire without changing a cached byte (the request extended the previous one). */
  uncached: number;
  /** Reached the wire on the first request of this run (nothing to compare with). */
  unobserved: number;
}

export function emptyRewriteTally(): RewriteTally {
  return { recorded: 0, pending: 0, billed: 0, free: 0, uncached: 0, unobserved: 0 };
}

export function tallyFlushRewrite(tally: RewriteTally): RewriteTally {
  return { ...tally, recorded: tally.recorded + 1, pending: tally.pending + 1 };
}

/**
 * A request went out. `cause` is its bust attribution, undefined when there was no earlier
 * request to compare with. Every pending rewrite rides on this request.
 */
export function tallyRequest(tally: RewriteTally, cause: BustCause | undefined): RewriteTally {
  if (tally.pending === 0) return tally;
  const n = tally.pending;
  const base = { ...tally, pending: 0 };
  if (cause === undefined) return { ...base, unobserved: tally.unobserved + n };
  if (cause === "keeper-rewrite") return { ...base, billed: tally.billed + n };
  if (cause === "none") return { ...base, uncached: tally.uncached + n };
  if (cause === "unknown") return { ...base, billed: tally.billed + n };
  return { ...base, free: tally.free + n };
}
