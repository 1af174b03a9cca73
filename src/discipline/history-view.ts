/**
 * History seen through renders, per raw branch message: what the last request sent, what the
 * next one would send with the state as it is, and with a flush's proposal applied.
 *
 * Renders may drop messages (chain compression) but keep timestamps (a compressed chain's
 * message carries the timestamp of the chain's first message), so rendered messages are
 * lined up with raw ones by timestamp: where the raw branch and the render hold as many
 * messages with timestamp t (parallel tool results written in the same millisecond), the k-th
 * counts for the k-th; otherwise every rendered message with timestamp t counts for the first
 * raw message with timestamp t and the other raw messages with t count 0. Raw messages
 * without a timestamp keep their own size and never count as changed.
 *
 * Tokens are chars / 4 of what the model sees (text, thinking, tool calls, images 4,800
 * chars), Pi's own estimate. Memoized per message object: renders reuse unchanged objects.
 */
import { isAssistant, timestampOf, type ContextMessage } from "../session/messages.ts";

const charsMemo = new WeakMap<object, number>();
const bytesMemo = new WeakMap<object, string>();

/** Model-visible characters of a message (text, thinking, tool calls, results; an image counts 4800). */
export function messageChars(m: ContextMessage): number {
  let n = charsMemo.get(m);
  if (n === undefined) {
    n = 0;
    const content = (m as { content?: unknown }).content;
    if (typeof content === "string") n = content.length;
    else if (Array.isArray(content)) {
      for (const b of content as Array<Record<string, unknown>>) {
        if (b.type === "text") n += String(b.text ?? "").length;
        else if (b.type === "thinking") n += String(b.thinking ?? "").length;
        else if (b.type === "toolCall") n += String(b.name ?? "").length + JSON.stringify(b.arguments ?? {}).length;
        else if (b.type === "image") n += 4800;
      }
    }
    charsMemo.set(m, n);
  }
  return n;
}

export function messageTokens(m: ContextMessage): number {
  return Math.ceil(messageChars(m) / 4);
}

/** Wire blocks a message becomes (for the 20-block lookback); tool results are one block each. */
export function messageBlocks(m: ContextMessage): number {
  const content = (m as { content?: unknown }).content;
  if ((m as { role?: string }).role === "toolResult") return 1;
  return Array.isArray(content) ? Math.max(1, content.length) : 1;
}

function bytesOf(m: ContextMessage): string {
  let s = bytesMemo.get(m);
  if (s === undefined) {
    s = JSON.stringify(m);
    bytesMemo.set(m, s);
  }
  return s;
}

/**
 * The slot's share of `JSON.stringify(rendered).length`: each message's JSON plus its comma
 * (each message read `as` another, e.g. as the render without the thinking strip has it).
 * Summed over every slot it is the serialized render's length − 1, so a difference between two
 * renders of the same raw branch is exact.
 */
export function slotJsonChars(slot: RenderedSlot, as: (m: ContextMessage) => ContextMessage = (m) => m): number {
  let n = 0;
  for (const m of slot.messages) n += bytesOf(as(m)).length + 1;
  return n;
}

export interface RenderedSlot {
  tokens: number;
  /** The rendered messages' identities (for change detection). */
  messages: ContextMessage[];
}

/** Rendered slots per raw message index (see the module comment). */
export function slotsByRawIndex(raw: readonly ContextMessage[], rendered: readonly ContextMessage[]): RenderedSlot[] {
  const byTs = new Map<number, RenderedSlot>();
  for (const m of rendered) {
    const t = timestampOf(m);
    if (t === undefined) continue;
    const slot = byTs.get(t) ?? { tokens: 0, messages: [] };
    slot.tokens += messageTokens(m);
    slot.messages.push(m);
    byTs.set(t, slot);
  }
  const rawCount = new Map<number, number>();
  for (const m of raw) {
    const t = timestampOf(m);
    if (t !== undefined) rawCount.set(t, (rawCount.get(t) ?? 0) + 1);
  }
  const seen = new Map<number, number>();
  return raw.map((m) => {
    const t = timestampOf(m);
    if (t === undefined) return { tokens: messageTokens(m), messages: [m] };
    const k = seen.get(t) ?? 0;
    seen.set(t, k + 1);
    const slot = byTs.get(t);
    if (slot && slot.messages.length > 1 && slot.messages.length === rawCount.get(t)) {
      const one = slot.messages[k]!;
      return { tokens: messageTokens(one), messages: [one] };
    }
    return k === 0 ? (slot ?? { tokens: 0, messages: [] }) : { tokens: 0, messages: [] };
  });
}

export function slotsDiffer(a: RenderedSlot, b: RenderedSlot): boolean {
  if (a.messages.length !== b.messages.length) return true;
  for (let i = 0; i < a.messages.length; i++) {
    const x = a.messages[i];
    const y = b.messages[i];
    if (x !== y && bytesOf(x) !== bytesOf(y)) return true;
  }
  return false;
}

/** Index of the last assistant message (the previous request produced it), or −1. */
export function lastAssistantIndex(messages: readonly ContextMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isAssistant(messages[i])) return i;
  return -1;
}

/**
 * True when the branch ends with an assistant message: flushes run there only when the request
 * is over (a final answer, or a loop the user interrupted), so the next request starts a new
 * user prompt.
 */
export function endsWithAssistant(messages: readonly ContextMessage[]): boolean {
  const last = messages[messages.length - 1];
  return last !== undefined && isAssistant(last);
}

/** A stand-in for the next user prompt, so the just-finished loop renders as history. */
export function nextPromptProbe(): ContextMessage {
  return { role: "user", content: "", timestamp: Number.MAX_SAFE_INTEGER } as ContextMessage;
}
