/**
 * Which assistant messages belong to the current tool loop and must go back to the provider
 * exactly as they were produced (thinking and signatures included): Anthropic answers 400 when
 * the open cycle's thinking is altered, and older Claude models drop every later block once
 * an early block of the cycle goes missing.
 */
import { isAssistant, isUser, type ContextMessage } from "../session/messages.ts";

/**
 * True when a `user` message carries visible text. A tool result is not a user turn, and an
 * image-only message is not counted either, which keeps more messages protected, never fewer.
 * Custom roles (compaction summaries, extension messages) are ignored for the same reason.
 */
export function isUserTextTurn(m: ContextMessage): boolean {
  if (!isUser(m)) return false;
  const content = m.content as unknown;
  if (typeof content === "string") return content.trim().length > 0;
  if (!Array.isArray(content)) return false;
  return content.some(
    (block: { type?: string; text?: unknown }) =>
      block?.type === "text" && typeof block.text === "string" && block.text.trim().length > 0,
  );
}

/**
 * Indices of the assistant messages the strip must not touch: every assistant message after
 * the last user text turn (the open cycle, i.e. the current tool loop), plus the last
 * assistant message of the array whatever precedes it.
 */
export function protectedAssistantIndices(messages: readonly ContextMessage[]): Set<number> {
  const out = new Set<number>();
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (isUserTextTurn(m)) break;
    if (isAssistant(m)) out.add(i);
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isAssistant(messages[i]!)) {
      lastAssistant = i;
      break;
    }
  }
  if (lastAssistant >= 0) out.add(lastAssistant);
  return out;
}
