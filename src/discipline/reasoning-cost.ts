/**
 * What a rewrite costs in reasoning, on models whose reasoning is bound to its prefix
 * (cache/reasoning-binding.ts: managed-effort Claude models, GPT-6.2 and later). The provider
 * drops every replayed thinking block (reasoning item) after the first changed message, on this
 * request and every later one: the model no longer sees what it reasoned there.
 *
 * The price: the dropped tokens at the model's output price (in units of one uncached input
 * token, like every gate figure) — what it costs the model to work that reasoning out again, once.
 *
 *   reasoningCost = droppedTokens × outputPrice
 *
 * Not credited against it: the reads the dropped blocks no longer cost (about readPrice per token
 * and request: 0.1 against an output price of 5 on Anthropic, so 50 later requests before they
 * match); the reasoning closest to the current work is what the model relies on, and a drop
 * inside a running loop takes the steps it is in the middle of. A block in the changed message
 * itself is bound to what came before it and stays; only later ones go.
 *
 * Tokens are the thinking text / 4 (Pi's estimate), counted in the history as the flush would
 * send it (its whole proposal applied: thinking the strip removes is not dropped, it is removed
 * and priced as a removal).
 *
 * A separate cost term of the gate (gate.ts `reasoningDropped`); the figures of what the
 * provider did drop come from Pi's diagnostics (reasoning-drops.ts).
 */
import type { CachePricing } from "../cache/pricing.ts";
import { isAssistant, type ContextMessage } from "../session/messages.ts";
import type { RenderedSlot } from "./history-view.ts";

/** Thinking tokens of a message: its thinking blocks' text / 4 (redacted blocks count 0: their size is unknown). */
export function thinkingTokensOf(m: ContextMessage): number {
  if (!isAssistant(m)) return 0;
  let chars = 0;
  for (const b of m.content) if (b.type === "thinking") chars += b.thinking.length;
  return Math.ceil(chars / 4);
}

/**
 * Per raw position p (a slot of `slotsByRawIndex`), the thinking tokens the provider drops when
 * history first changes at p: those in the slots after p. `after[slots.length − 1] = 0`.
 */
export function thinkingDroppedAfter(slots: readonly RenderedSlot[]): (position: number) => number {
  const after = new Array<number>(slots.length + 1).fill(0);
  for (let i = slots.length - 1; i >= 0; i--) after[i] = after[i + 1]! + slots[i]!.messages.reduce((n, m) => n + thinkingTokensOf(m), 0);
  // after[i] counts slot i too: a change at p keeps slot p's own thinking, so read after[p + 1].
  return (position) => after[Math.min(slots.length, Math.max(0, position + 1))]!;
}

/** The gate's reasoning term: dropped tokens at the output price. */
export function reasoningDropCost(droppedTokens: number, pricing: Pick<CachePricing, "output">): number {
  return Math.max(0, droppedTokens) * pricing.output;
}
