/**
 * Where a rewrite really starts re-writing. A change at raw position p invalidates every cache
 * entry after p, but the request re-reads only an entry one of its marks can reach:
 * - the seam (the mark at the end of the frozen history, carried by the last request), when
 *   it sits at or before p;
 * - an entry written by an earlier request's last mark: requests end on a user or tool-result
 *   message, so the entry before p ends at the last such message e < p; the new request's
 *   last mark finds it when at most `lookbackBlocks` blocks follow e (the mark's own block
 *   counted), and the rewrite then starts at e + 1;
 * - otherwise only tools + system: every message is written again (anchor 0).
 * On a provider with automatic prefix caching (OpenAI, Google) every prefix the last request
 * sent is cached, so the rewrite starts at the change itself (anchor p).
 * The anchor is a raw cut: the rewrite re-writes the messages from it on.
 */
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;

export interface AnchorModel {
  /** Raw cut of the seam the last request carried; undefined without one. */
  seamCut: number | undefined;
  /** Wire blocks of each raw message, in branch order. */
  blocks: readonly number[];
  /** requestEnd[i]: message i can end a request's prompt (a user or tool-result message). */
  requestEnd: readonly boolean[];
  /** Blocks the next request adds after the branch (a new prompt: 1). */
  trailingBlocks: number;
  lookbackBlocks?: number;
  /** The provider caches every prefix by itself (no marks): the anchor of p is p. */
  automaticPrefix?: boolean;
}

/** anchorOf(p) for every p in 0..blocks.length, non-decreasing in p. */
export function readableAnchors(model: AnchorModel): number[] {
  const n = model.blocks.length;
  if (model.automaticPrefix) return Array.from({ length: n + 1 }, (_, p) => p);
  const lookback = model.lookbackBlocks ?? ANTHROPIC_LOOKBACK_BLOCKS;
  // after[i] = blocks of messages i..n-1 plus the trailing ones.
  const after = new Array<number>(n + 1).fill(model.trailingBlocks);
  for (let i = n - 1; i >= 0; i--) after[i] = after[i + 1] + model.blocks[i];
  const out = new Array<number>(n + 1).fill(0);
  let best = 0;
  let lastEnd = -1; // last request end < p
  for (let p = 0; p <= n; p++) {
    if (p > 0 && model.requestEnd[p - 1]) lastEnd = p - 1;
    if (model.seamCut !== undefined && model.seamCut <= p) best = Math.max(best, model.seamCut);
    if (lastEnd >= 0 && after[lastEnd + 1] <= lookback) best = Math.max(best, lastEnd + 1);
    out[p] = best;
  }
  return out;
}

/**
 * The last request's tokens a rewrite whose first change is at raw position q sends again
 * instead of reading them: from the anchor of q to the end of what that request carried.
 * `sentTokens[i]`: tokens raw message i rendered to in that request (its messages up to the
 * last assistant message, exclusive); `anchors`: `readableAnchors` over the branch.
 */
export function cachedTokensFromOf(sentTokens: readonly number[], anchors: readonly number[]): (q: number) => number {
  const n = sentTokens.length;
  const from = new Array<number>(n + 1).fill(0);
  for (let i = n - 1; i >= 0; i--) from[i] = from[i + 1]! + sentTokens[i]!;
  return (q) => from[Math.min(n, anchors[Math.min(Math.max(0, q), anchors.length - 1)] ?? 0)]!;
}
