/**
 * Where the seam goes in a wire payload, from the persisted frozen boundary and the messages
 * the `context` handler rendered (render stays pure; this runs in `before_provider_request`).
 *
 * Rendered messages carry timestamps, wire messages do not, and pi-ai reshapes the array
 * (consecutive tool results merge into one user message, errored assistants are dropped,
 * custom messages become user text). So the last frozen rendered message is found by
 * timestamp, then located on the wire by something both sides carry: a tool result's id, an
 * assistant's tool-call id, or a user message's text. Ids may repeat within a session, so
 * the n-th occurrence on one side is matched with the n-th on the other.
 *
 * The seam moves lazily: when a request re-writes history after the seam the previous
 * request carried, the seam stays there (its cache entry is what this request reads); it
 * moves to the new boundary on a request that only extends the previous one, where the move
 * costs nothing.
 */
import { anthropicMinCacheableTokens } from "../cache/cache-rules.ts";
import type { WireMessage, WireRequestBody } from "../cache/wire-types.ts";
import { isAssistant, isToolResult, isUser, positionTimestampOf, toolCallsOf, type ContextMessage } from "../session/messages.ts";

/** Index of the last rendered message at or before the frozen timestamp (−1: none). */
export function renderedIndexThrough(rendered: readonly ContextMessage[], frozenThrough: number): number {
  let out = -1;
  for (let i = 0; i < rendered.length; i++) {
    const t = positionTimestampOf(rendered[i]);
    if (t !== undefined && t > frozenThrough) break;
    out = i;
  }
  return out;
}

type AnyBlock = { type: string; tool_use_id?: unknown; id?: unknown; text?: unknown };

/** Whether a block of `m` has `type` and `field` equal to `value` (string content is one text block). No allocation: it runs over every message. */
function hasBlock(m: WireMessage, type: string, field: "tool_use_id" | "id" | "text", value: unknown): boolean {
  const c = m.content;
  if (typeof c === "string") return type === "text" && (field === "text" ? c : undefined) === value;
  for (const b of c as AnyBlock[]) if (b.type === type && b[field] === value) return true;
  return false;
}

/** Wire index of the occurrence-th message (0-based) satisfying `has`, or undefined. */
function nthWire(body: WireRequestBody, has: (m: WireMessage) => boolean, occurrence: number): number | undefined {
  let seen = 0;
  for (let i = 0; i < body.messages.length; i++) {
    if (!has(body.messages[i])) continue;
    if (seen === occurrence) return i;
    seen++;
  }
  return undefined;
}

/** The last non-empty text block of a user message (its string content as it is). */
function userText(m: ContextMessage): string | undefined {
  const c = (m as { content?: unknown }).content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return undefined;
  for (let i = c.length - 1; i >= 0; i--) {
    const b = c[i] as { type: string; text?: string };
    if (b.type === "text" && b.text) return b.text;
  }
  return undefined;
}

/** How many of `messages[0..end)` satisfy `has`. */
function countBefore(messages: readonly ContextMessage[], end: number, has: (m: ContextMessage) => boolean): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (has(messages[i])) n++;
  return n;
}

/** The wire message holding rendered message `index`, found through the nearest identifiable message at or before it. */
export function wireIndexOfRendered(rendered: readonly ContextMessage[], index: number, body: WireRequestBody): number | undefined {
  for (let i = Math.min(index, rendered.length - 1); i >= 0; i--) {
    const m = rendered[i];
    let found: number | undefined;
    if (isToolResult(m)) {
      const id = m.toolCallId;
      const n = countBefore(rendered, i, (x) => isToolResult(x) && x.toolCallId === id);
      found = nthWire(body, (w) => w.role === "user" && hasBlock(w, "tool_result", "tool_use_id", id), n);
    } else if (isAssistant(m) && m.stopReason !== "error" && m.stopReason !== "aborted" && toolCallsOf(m).length > 0) {
      const id = toolCallsOf(m)[0].id;
      const n = countBefore(rendered, i, (x) => isAssistant(x) && x.stopReason !== "error" && x.stopReason !== "aborted" && x.content.some((c) => c.type === "toolCall" && c.id === id));
      found = nthWire(body, (w) => w.role === "assistant" && hasBlock(w, "tool_use", "id", id), n);
    } else if (isUser(m)) {
      const text = userText(m);
      if (text !== undefined) {
        const n = countBefore(rendered, i, (x) => isUser(x) && userText(x) === text);
        found = nthWire(body, (w) => w.role === "user" && hasBlock(w, "text", "text", text), n);
      }
    }
    if (found !== undefined) return found;
  }
  return undefined;
}

export interface SeamChoiceInput {
  /** Wire index of the frozen boundary in this payload (undefined: none). */
  target: number | undefined;
  /** Seam wire index the previous request carried (−1 or undefined: none). */
  previousSeam: number | undefined;
  /** Short prefix hashes per message of the previous and of this request (attribution.ts). */
  previousPrefixes: readonly string[] | undefined;
  currentPrefixes: readonly string[];
}

/** First message index where the prefixes differ within the previous request, or undefined when this one extends it. */
function firstDifference(previous: readonly string[], current: readonly string[]): number | undefined {
  for (let i = 0; i < previous.length; i++) if (previous[i] !== current[i]) return i;
  return undefined;
}

export function chooseSeamIndex(input: SeamChoiceInput): number | undefined {
  const { target, previousSeam, previousPrefixes, currentPrefixes } = input;
  if (previousPrefixes === undefined || previousSeam === undefined || previousSeam < 0) return target;
  const changed = firstDifference(previousPrefixes, currentPrefixes);
  if (changed === undefined) return target;
  // History changed: keep the previous seam when its prefix survived, so it is read.
  return previousSeam < changed ? previousSeam : target;
}

/** Anthropic's minimum cacheable prompt by model (tokens). */
export function minCacheableTokensFor(modelId: string): number {
  return anthropicMinCacheableTokens(modelId);
}
