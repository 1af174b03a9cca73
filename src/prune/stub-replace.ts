/**
 * Phase 1: results of summarized calls become one short text block naming their recall
 * ref and the summary. Every other field of the result (role, toolCallId, toolName,
 * isError, timestamp, details ...) is kept.
 *
 * This phase also reaches into the current tool loop: a budget flush in a long loop stubs
 * the loop's earlier batches (their tool results only; assistant messages, thinking and
 * signatures stay untouched, as the API requires). A flush never captures the batch the
 * model has not answered yet, so every output reaches the model raw at least once.
 *
 * Every ref a stub shows can be recalled: its own (the result it replaces is in the request,
 * so recall finds it on the branch by that ref even without an index entry), and a ref it
 * points at (batch summary carrier, alias target) only when this request answers that ref
 * too — otherwise the stub carries the summary itself.
 */
import { type ContextMessage, type ToolResultMessage, isToolResult, isUser } from "../session/messages.ts";
import type { KeeperState } from "../state/schema.ts";
import { pairToolCalls } from "./occurrence.ts";
import type { RenderPhase } from "./phase.ts";
import { stubIndexOf } from "./stub-text.ts";

function isAlreadyStub(m: ToolResultMessage, text: string): boolean {
  return m.content.length === 1 && m.content[0].type === "text" && m.content[0].text === text;
}

export const stubReplace: RenderPhase = (messages, { state, pairing: known }) => {
  const { textByKey, pointers } = stubIndexOf(state);
  if (textByKey.size === 0) return messages;
  const pairing = known ?? pairToolCalls(messages);
  // Refs this request shows: a stub may point only at these (recall finds them by ref on the branch).
  let shown: Set<string> | undefined;
  const isShown = (ref: string) => (shown ??= refsInRequest(messages, state, pairing.callKeyByResultIndex.values())).has(ref);
  let out: ContextMessage[] | undefined;
  for (const [index, key] of pairing.callKeyByResultIndex) {
    const own = textByKey.get(key);
    if (own === undefined) continue; // not stubbed (every pointer's key has a text too)
    const pointer = pointers.get(key);
    const text = pointer !== undefined && !isShown(pointer.ref) ? pointer.standalone : own;
    const m = messages[index];
    if (!isToolResult(m) || isAlreadyStub(m, text)) continue;
    out ??= messages.slice();
    out[index] = { ...m, content: [{ type: "text", text }] };
  }
  return out ?? messages;
};

/** Keys the request answers, plus the members of compressed chains it already shows collapsed. */
function refsInRequest(messages: readonly ContextMessage[], state: KeeperState, answered: Iterable<string>): Set<string> {
  const refs = new Set(answered);
  const chains = state.frontier.compressedChains;
  if (chains.length === 0) return refs;
  const texts = new Set<string>();
  for (const m of messages) {
    if (!isUser(m) || !Array.isArray(m.content)) continue;
    for (const block of m.content) if (block.type === "text") texts.add(block.text);
  }
  for (const c of chains) if (texts.has(c.text)) for (const k of c.memberKeys) refs.add(k);
  return refs;
}
