/**
 * Phase 2: the arguments of failed calls whose keys the last flush put in
 * `purgedErrorKeys` are replaced by a small marker (id, name and other block fields kept).
 * The decision is made at a flush; render only applies it.
 */
import { type AssistantMessage, type ContextMessage, isAssistant } from "../session/messages.ts";
import { callKeysOf, currentLoopStart, pairToolCalls } from "./occurrence.ts";
import type { RenderPhase } from "./phase.ts";
import { purgedArguments } from "./stub-text.ts";

function alreadyPurged(args: unknown, marker: { _purged: string }): boolean {
  const a = args as Record<string, unknown> | undefined;
  return !!a && Object.keys(a).length === 1 && a._purged === marker._purged;
}

function purgeIn(m: AssistantMessage, purged: ReadonlySet<string>): AssistantMessage {
  const keys = callKeysOf(m);
  let callIndex = -1;
  let changed = false;
  const content = m.content.map((block) => {
    if (block.type !== "toolCall") return block;
    callIndex++;
    const key = keys[callIndex];
    if (!purged.has(key)) return block;
    const marker = purgedArguments(key);
    if (alreadyPurged(block.arguments, marker)) return block;
    changed = true;
    return { ...block, arguments: marker };
  });
  return changed ? { ...m, content } : m;
}

export const errorPurge: RenderPhase = (messages, { state }) => {
  if (state.frontier.purgedErrorKeys.length === 0) return messages;
  // Only calls this request answers: the marker names a ref, and recall finds a ref by its result.
  const answered = new Set(pairToolCalls(messages).callKeyByResultIndex.values());
  const purged = new Set(state.frontier.purgedErrorKeys.filter((k) => answered.has(k)));
  if (purged.size === 0) return messages;
  const loopStart = currentLoopStart(messages);
  let out: ContextMessage[] | undefined;
  for (let i = 0; i < loopStart; i++) {
    const m = messages[i];
    if (!isAssistant(m)) continue;
    const next = purgeIn(m, purged);
    if (next === m) continue;
    out ??= messages.slice();
    out[i] = next;
  }
  return out ?? messages;
};
