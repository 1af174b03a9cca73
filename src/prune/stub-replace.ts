/**
 * Phase 1: results of summarized calls become one short text block naming their recall
 * ref and the summary. Every other field of the result (role, toolCallId, toolName,
 * isError, timestamp, details ...) is kept.
 *
 * This phase also reaches into the current tool loop: a budget flush in a long loop stubs
 * the loop's earlier batches (their tool results only; assistant messages, thinking and
 * signatures stay untouched, as the API requires). A flush never captures the batch the
 * model has not answered yet, so every output reaches the model raw at least once.
 */
import { type ContextMessage, type ToolResultMessage, isToolResult } from "../session/messages.ts";
import { pairToolCalls } from "./occurrence.ts";
import type { RenderPhase } from "./phase.ts";
import { stubIndexOf } from "./stub-text.ts";

function isAlreadyStub(m: ToolResultMessage, text: string): boolean {
  return m.content.length === 1 && m.content[0].type === "text" && m.content[0].text === text;
}

export const stubReplace: RenderPhase = (messages, { state }) => {
  const { textByKey } = stubIndexOf(state);
  if (textByKey.size === 0) return messages;
  const pairing = pairToolCalls(messages);
  let out: ContextMessage[] | undefined;
  for (const [index, key] of pairing.callKeyByResultIndex) {
    const text = textByKey.get(key);
    const m = messages[index];
    if (text === undefined || !isToolResult(m) || isAlreadyStub(m, text)) continue;
    out ??= messages.slice();
    out[index] = { ...m, content: [{ type: "text", text }] };
  }
  return out ?? messages;
};
