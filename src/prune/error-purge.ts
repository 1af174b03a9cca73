/**
 * Phase 2: the arguments of failed calls whose keys the last flush put in
 * `purgedErrorKeys` are replaced by a small marker (id, name and other block fields kept).
 * The decision is made at a flush; render only applies it.
 */
import { type AssistantMessage, type ContextMessage, isAssistant } from "../session/messages.ts";
import { currentLoopStart, pairToolCalls } from "./occurrence.ts";
import type { RenderPhase } from "./phase.ts";
import { purgedArguments } from "./stub-text.ts";

function alreadyPurged(args: unknown, marker: { _purged: string }): boolean {
  const a = args as Record<string, unknown> | undefined;
  return !!a && Object.keys(a).length === 1 && a._purged === marker._purged;
}

/** `m` with the arguments of its calls at the given call indices (→ their keys) replaced by their markers. */
function purgeIn(m: AssistantMessage, calls: ReadonlyMap<number, string>): AssistantMessage {
  let callIndex = -1;
  let changed = false;
  const content = m.content.map((block) => {
    if (block.type !== "toolCall") return block;
    callIndex++;
    const key = calls.get(callIndex);
    if (key === undefined) return block;
    const marker = purgedArguments(key);
    if (alreadyPurged(block.arguments, marker)) return block;
    changed = true;
    return { ...block, arguments: marker };
  });
  return changed ? { ...m, content } : m;
}

export const errorPurge: RenderPhase = (messages, { state, pairing: known }) => {
  if (state.frontier.purgedErrorKeys.length === 0) return messages;
  const pairing = known ?? pairToolCalls(messages);
  // Only calls this request answers: the marker names a ref, and recall finds a ref by its result.
  const listed = new Set(state.frontier.purgedErrorKeys);
  const purged = new Set<string>();
  for (const c of pairing.calls) if (c.resultIndex !== undefined && listed.has(c.key)) purged.add(c.key);
  if (purged.size === 0) return messages;
  const loopStart = currentLoopStart(messages);
  const byAssistant = new Map<number, Map<number, string>>();
  for (const c of pairing.calls) {
    if (c.assistantIndex >= loopStart) break;
    if (!purged.has(c.key)) continue;
    let calls = byAssistant.get(c.assistantIndex);
    if (!calls) byAssistant.set(c.assistantIndex, (calls = new Map()));
    calls.set(c.callIndex, c.key);
  }
  let out: ContextMessage[] | undefined;
  for (const [i, calls] of byAssistant) {
    const m = messages[i];
    if (!isAssistant(m)) continue;
    const next = purgeIn(m, calls);
    if (next === m) continue;
    out ??= messages.slice();
    out[i] = next;
  }
  return out ?? messages;
};
