/**
 * Last phase: no orphan tool call or result reaches the provider. Outside the current
 * tool loop, a toolResult that answers no replayed call (see `pairToolCalls`) is dropped,
 * and a replayed call without a result loses its toolCall block; an assistant left with
 * no text or tool call (thinking only, or nothing) is dropped whole. Calls of
 * `error`/`aborted` assistants are left alone: pi-ai never sends those messages.
 */
import { type AssistantMessage, type ContextMessage, isAssistant } from "../session/messages.ts";
import { currentLoopStart, pairToolCalls } from "./occurrence.ts";
import type { RenderPhase } from "./phase.ts";

function withoutCalls(m: AssistantMessage, drop: ReadonlySet<number>): AssistantMessage | undefined {
  let callIndex = -1;
  const content = m.content.filter((b) => {
    if (b.type !== "toolCall") return true;
    callIndex++;
    return !drop.has(callIndex);
  });
  const substantive = content.some((b) => b.type === "toolCall" || (b.type === "text" && b.text.length > 0));
  return substantive ? { ...m, content } : undefined;
}

export const pairingSweep: RenderPhase = (messages, { pairing: known }) => {
  const loopStart = currentLoopStart(messages);
  const pairing = known ?? pairToolCalls(messages);
  const dropResults = new Set(pairing.orphanResults.filter((i) => i < loopStart));
  const dropCalls = new Map<number, Set<number>>();
  for (const c of pairing.unansweredCalls) {
    if (c.assistantIndex >= loopStart) continue;
    let set = dropCalls.get(c.assistantIndex);
    if (!set) dropCalls.set(c.assistantIndex, (set = new Set()));
    set.add(c.callIndex);
  }
  if (dropResults.size === 0 && dropCalls.size === 0) return messages;

  const out: ContextMessage[] = [];
  messages.forEach((m, i) => {
    if (dropResults.has(i)) return;
    const drop = dropCalls.get(i);
    if (drop && isAssistant(m)) {
      const kept = withoutCalls(m, drop);
      if (kept) out.push(kept);
      return;
    }
    out.push(m);
  });
  return out;
};
