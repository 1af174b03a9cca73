/**
 * The seam: one extra `cache_control` mark at the end of the frozen history.
 *
 * pi-ai marks the system block, the last tool and the last block of the last user/toolResult
 * message, so nothing marks a point inside history. With a mark at the end of the frozen part
 * (the history before the quantized boundary, byte-stable between flushes):
 * - a later rewrite after the seam re-writes only what follows it, not the whole history;
 * - the tail mark's 20-block lookback finds the seam's entry even after a long tool loop.
 *
 * Rules: Anthropic Messages only; never more than 4 marks in the payload (an existing mark on
 * the chosen block means nothing to add); a 1-hour mark may not follow a 5-minute one, so the
 * new mark's TTL is forced by the marks around it; never below the model's minimum cacheable
 * prefix; never on a block type that cannot carry a mark (thinking, redacted_thinking, empty
 * text) — the last markable block at or before the seam is taken instead.
 * Pure: returns the very same payload object when it changes nothing.
 */
import { flattenRequest, type FlatBlock } from "../cache/flatten.ts";
import { createCharRatioEstimator } from "../cache/token-estimator.ts";
import type { WireCacheControl, WireMessage, WireRequestBody } from "../cache/wire-types.ts";

/**
 * Block types that may carry `cache_control`. pi-ai itself marks text, image, tool_result and its
 * native tool_addition / tool_removal blocks; Anthropic also caches tool_use blocks.
 */
export const DEFAULT_MARKABLE_TYPES: readonly string[] = ["text", "image", "tool_result", "tool_use", "tool_addition", "tool_removal"];

export const ANTHROPIC_MAX_CACHE_MARKS = 4;

export interface BlockAddress {
  messageIndex: number;
  blockIndex: number;
}

export interface SeamOptions {
  /** The request's API; only "anthropic-messages" gets a seam. */
  api: string;
  /** Index in `payload.messages` of the last frozen message. */
  seamMessageIndex: number;
  /** The model's minimum cacheable prompt, tokens (Anthropic: 1024–4096 by model). */
  minCacheableTokens: number;
  /** Tokens of everything up to and including the block (tools, system, messages). Default: char-ratio estimate. */
  estimatePrefixTokens?: (payload: WireRequestBody, at: BlockAddress) => number;
  maxMarks?: number;
  markableTypes?: readonly string[];
  /** TTL when no other mark constrains it; default "5m". */
  defaultTtl?: "5m" | "1h";
  /** `flattenRequest(payload)` when the caller already has it (saves flattening the body again). */
  flat?: readonly FlatBlock[];
  /** With `flat`: the default char-ratio estimate of each block (saves estimating them again). */
  flatTokens?: readonly number[];
}

export type SeamSkip =
  | "not-anthropic"
  | "no-seam"
  | "no-markable-block"
  | "already-marked"
  | "mark-budget"
  | "ttl-conflict"
  | "below-minimum";

export type SeamPlan =
  | { kind: "place"; at: BlockAddress; mark: WireCacheControl; prefixTokens: number; existingMarks: number }
  | { kind: "skip"; reason: SeamSkip; existingMarks: number };

function isMarkable(block: FlatBlock, types: readonly string[]): boolean {
  if (!types.includes(block.type)) return false;
  if (block.type === "text") return typeof block.block.text === "string" && block.block.text.length > 0;
  return true;
}

export function defaultPrefixTokenEstimate(flat?: readonly FlatBlock[], flatTokens?: readonly number[]): (payload: WireRequestBody, at: BlockAddress) => number {
  const estimate = createCharRatioEstimator();
  const known = flat ? flatTokens : undefined;
  return (payload, at) => {
    let sum = 0;
    const blocks = flat ?? flattenRequest(payload);
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i];
      if (b.layer === "messages" && (b.messageIndex > at.messageIndex || (b.messageIndex === at.messageIndex && b.blockIndex > at.blockIndex))) break;
      sum += known ? known[i] : estimate(b);
    }
    return sum;
  };
}

const mark = (ttl: "5m" | "1h"): WireCacheControl => (ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" });
const is1h = (m: WireCacheControl): boolean => m.ttl === "1h";

export function planSeamMark(payload: WireRequestBody, options: SeamOptions): SeamPlan {
  const flat = options.flat ?? flattenRequest(payload);
  const markAt: number[] = [];
  for (let i = 0; i < flat.length; i++) if (flat[i].mark !== undefined) markAt.push(i);
  const existingMarks = markAt.length;
  const skip = (reason: SeamSkip): SeamPlan => ({ kind: "skip", reason, existingMarks });
  if (options.api !== "anthropic-messages") return skip("not-anthropic");
  const seam = options.seamMessageIndex;
  if (!Number.isInteger(seam) || seam < 0 || seam >= payload.messages.length) return skip("no-seam");

  const types = options.markableTypes ?? DEFAULT_MARKABLE_TYPES;
  let chosen = -1;
  for (let i = flat.length - 1; i >= 0; i--) {
    const b = flat[i];
    if (b.layer !== "messages" || b.messageIndex > seam) continue;
    if (isMarkable(b, types)) {
      chosen = i;
      break;
    }
  }
  if (chosen < 0) return skip("no-markable-block");
  const target = flat[chosen];
  if (target.mark !== undefined) return skip("already-marked");
  if (existingMarks + 1 > (options.maxMarks ?? ANTHROPIC_MAX_CACHE_MARKS)) return skip("mark-budget");

  const before = markAt.filter((i) => i < chosen).map((i) => flat[i]);
  const after = markAt.filter((i) => i > chosen).map((i) => flat[i]);
  const mustBe1h = after.some((b) => is1h(b.mark!));
  const mustBe5m = before.some((b) => !is1h(b.mark!));
  if (mustBe1h && mustBe5m) return skip("ttl-conflict");
  const neighbour = after[0]?.mark ?? before[before.length - 1]?.mark;
  const ttl: "5m" | "1h" = mustBe1h ? "1h" : mustBe5m ? "5m" : neighbour ? (is1h(neighbour) ? "1h" : "5m") : options.defaultTtl ?? "5m";

  const at = { messageIndex: target.messageIndex, blockIndex: target.blockIndex };
  const prefixTokens = (options.estimatePrefixTokens ?? defaultPrefixTokenEstimate(flat, options.flat ? options.flatTokens : undefined))(payload, at);
  if (prefixTokens < options.minCacheableTokens) return skip("below-minimum");
  return { kind: "place", at, mark: mark(ttl), prefixTokens, existingMarks };
}

/** Applies a plan; copies only the path to the marked block. */
export function applySeamPlan<T extends WireRequestBody>(payload: T, plan: SeamPlan): T {
  if (plan.kind !== "place") return payload;
  const { messageIndex, blockIndex } = plan.at;
  const message = payload.messages[messageIndex];
  const content: WireMessage["content"] =
    typeof message.content === "string"
      ? [{ type: "text", text: message.content, cache_control: plan.mark }]
      : message.content.map((b, i) => (i === blockIndex ? { ...b, cache_control: plan.mark } : b));
  const messages = payload.messages.map((m, i) => (i === messageIndex ? { ...m, content } : m));
  return { ...payload, messages };
}

/** planSeamMark + applySeamPlan: the payload with the seam mark, or the same object. */
export function placeSeamMark<T extends WireRequestBody>(payload: T, options: SeamOptions): T {
  return applySeamPlan(payload, planSeamMark(payload, options));
}
