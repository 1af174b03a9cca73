/**
 * The quantized boundary: a staircase, not a ramp.
 *
 * A flush proposes where "old" history should end (the *candidate*). Moving that boundary by
 * one message per turn would rewrite the cached prefix every turn. Instead the boundary sits
 * on a grid of `chunk` units and only moves when the candidate has passed a whole new grid
 * point; then it snaps back to the nearest earlier *closed* cut (no tool call before it still
 * waiting for its result after it). It never moves backwards.
 *
 * Units. Cuts are indices over the **raw session branch** (not the rendered array: chain
 * compression drops messages from renders, the branch keeps them). `cutPositions[k]` is the
 * cut's coordinate in the chosen unit: `k` for messages, cumulative tokens for tokens. Both
 * are stable across renders because the raw branch only grows at the end. The boundary is
 * persisted as the timestamp of the last message before it (`frozenThroughTimestamp`), which
 * survives reloads and is mapped back to a cut by counting messages at or before it. After a
 * Pi compaction the branch restarts and the grid is laid afresh: that compaction has
 * rewritten the cache anyway.
 */
import { positionTimestampOf, type ContextMessage } from "../session/messages.ts";
import { closedCuts, messageCutPositions, tokenCutPositions } from "./closed-cuts.ts";

export interface QuantizeInput {
  /** Coordinate of each cut 0..n in the chosen unit, ascending, `cutPositions[0] = 0`. */
  cutPositions: readonly number[];
  /** closed[k]: cut k separates no tool call from its result. Same length as cutPositions. */
  closed: readonly boolean[];
  /** Where the planner would like the boundary, in the same unit. */
  candidate: number;
  /** Grid step in the same unit; <= 0 turns quantization off (the boundary follows the candidate). */
  chunk: number;
  /** The persisted boundary as a cut index, if any. */
  previousCut?: number;
  /** Do not create or move a boundary to a cut below this (too little to be worth a rewrite). */
  minimumCut?: number;
}

export type QuantizeReason =
  | "first" // no previous boundary; one is set
  | "advanced" // a new grid point was reached and snapped past the previous cut
  | "held" // the snapped grid point is not past the previous cut
  | "not-ready" // the candidate has not reached the first grid point
  | "no-closed-cut" // no closed cut at or before the grid point
  | "below-minimum"; // the snapped cut is below minimumCut

export interface QuantizedBoundary {
  /** The boundary cut (undefined while none has ever been set). */
  cut: number | undefined;
  /** True when `cut` differs from `previousCut`. */
  moved: boolean;
  /** floor(candidate / chunk) * chunk (or the candidate when chunk <= 0). */
  gridPosition: number;
  reason: QuantizeReason;
}

/** Largest closed cut k >= 1 whose position is <= limit, or undefined. */
export function lastClosedCutAtOrBefore(cutPositions: readonly number[], closed: readonly boolean[], limit: number): number | undefined {
  for (let k = Math.min(cutPositions.length, closed.length) - 1; k >= 1; k--) {
    if (cutPositions[k] <= limit && closed[k]) return k;
  }
  return undefined;
}

export function quantizeBoundary(input: QuantizeInput): QuantizedBoundary {
  const n = Math.min(input.cutPositions.length, input.closed.length) - 1;
  const previous = input.previousCut === undefined ? undefined : Math.max(0, Math.min(n, Math.floor(input.previousCut)));
  const grid = input.chunk > 0 ? Math.floor(input.candidate / input.chunk) * input.chunk : input.candidate;
  const keep = (reason: QuantizeReason): QuantizedBoundary => ({ cut: previous, moved: false, gridPosition: grid, reason });
  if (n < 1 || grid <= 0) return keep("not-ready");
  const snapped = lastClosedCutAtOrBefore(input.cutPositions, input.closed, grid);
  if (snapped === undefined) return keep("no-closed-cut");
  if (previous !== undefined && snapped <= previous) return keep("held");
  if (snapped < (input.minimumCut ?? 0)) return keep("below-minimum");
  return { cut: snapped, moved: true, gridPosition: grid, reason: previous === undefined ? "first" : "advanced" };
}

export type BoundaryUnit =
  | { kind: "messages"; keepTail: number; chunk: number }
  | { kind: "tokens"; keepTailTokens: number; chunkTokens: number; tokensOf: (m: ContextMessage) => number };

export interface BranchBoundaryInput {
  /** The raw session branch, oldest first. */
  messages: readonly ContextMessage[];
  unit: BoundaryUnit;
  /** Persisted boundary: timestamp of the last message before it. */
  previousFrozenThroughTimestamp?: number;
  minimumCut?: number;
}

export interface BranchBoundary extends QuantizedBoundary {
  /** Timestamp of the last message before `cut` (what to persist), if it has one. */
  frozenThroughTimestamp: number | undefined;
}

/**
 * Number of leading messages at or before the persisted timestamp (messages without one follow
 * their predecessor, and so do Pi's system messages: the leading one is stamped when the first
 * request is built, after the first prompt, so its timestamp is no position).
 */
export function cutFromTimestamp(messages: readonly ContextMessage[], frozenThrough: number): number {
  let cut = 0;
  for (let i = 0; i < messages.length; i++) {
    const t = positionTimestampOf(messages[i]);
    if (t !== undefined && t > frozenThrough) break;
    cut = i + 1;
  }
  return cut;
}

function timestampBeforeCut(messages: readonly ContextMessage[], cut: number): number | undefined {
  for (let i = cut - 1; i >= 0; i--) {
    const t = positionTimestampOf(messages[i]);
    if (t !== undefined) return t;
  }
  return undefined;
}

/** Quantize the frozen-history boundary over a raw branch, in messages or tokens. */
export function quantizeBranchBoundary(input: BranchBoundaryInput): BranchBoundary {
  const { messages, unit } = input;
  const closed = closedCuts(messages);
  const cutPositions = unit.kind === "messages" ? messageCutPositions(messages.length) : tokenCutPositions(messages, unit.tokensOf);
  const total = cutPositions[cutPositions.length - 1];
  const candidate = unit.kind === "messages" ? total - unit.keepTail : total - unit.keepTailTokens;
  const chunk = unit.kind === "messages" ? unit.chunk : unit.chunkTokens;
  const previousCut =
    input.previousFrozenThroughTimestamp === undefined ? undefined : cutFromTimestamp(messages, input.previousFrozenThroughTimestamp);
  const q = quantizeBoundary({ cutPositions, closed, candidate, chunk, previousCut, minimumCut: input.minimumCut });
  // Unmoved: hand back exactly what was persisted, so the stored value never drifts.
  const frozenThroughTimestamp = q.moved && q.cut !== undefined ? timestampBeforeCut(messages, q.cut) : input.previousFrozenThroughTimestamp;
  return { ...q, frozenThroughTimestamp };
}
