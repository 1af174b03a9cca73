/**
 * Phase 3: closed tool chains recorded in the frontier collapse into one synthetic user
 * message carrying the chain's summaries (text fixed at the flush). The prompt before the
 * chain and the final text answer after it are kept; the tool-use assistants and their
 * results in between are dropped. A system message inside the chain (a prompt section or a
 * tool Pi declared mid-loop) is kept, right after the summary: what it declares holds for the
 * rest of the session. A recorded chain whose range no longer matches
 * exactly (different length, end timestamp, or not self-contained) is left alone.
 */
import { type ContextMessage, isSystemMessage, type UserMessage, timestampOf } from "../session/messages.ts";
import type { CompressedChain } from "../state/schema.ts";
import { isCollapsibleRange } from "./chains.ts";
import { currentLoopStart, pairToolCalls } from "./occurrence.ts";
import type { RenderPhase } from "./phase.ts";

export function chainMessage(chain: CompressedChain): UserMessage {
  return { role: "user", content: [{ type: "text", text: chain.text }], timestamp: chain.fromTimestamp };
}

export const chainCompress: RenderPhase = (messages, { state, pairing: known }) => {
  const chains = state.frontier.compressedChains;
  if (chains.length === 0) return messages;
  const loopStart = currentLoopStart(messages);
  const pairing = known ?? pairToolCalls(messages);

  // Each assistant's first call key (before the current loop) -> its index; the earliest wins.
  const startByFirstKey = new Map<string, number>();
  for (const c of pairing.calls) {
    if (c.assistantIndex >= loopStart) break;
    if (c.callIndex === 0 && !startByFirstKey.has(c.key)) startByFirstKey.set(c.key, c.assistantIndex);
  }

  const ranges: { start: number; end: number; chain: CompressedChain }[] = [];
  for (const chain of chains) {
    const start = startByFirstKey.get(chain.firstCallKey);
    if (start === undefined || timestampOf(messages[start]) !== chain.fromTimestamp) continue;
    const end = start + chain.messageCount - 1;
    if (end + 1 >= loopStart || timestampOf(messages[end]) !== chain.toTimestamp) continue;
    if (!isCollapsibleRange(messages, start, end, pairing)) continue;
    ranges.push({ start, end, chain });
  }
  if (ranges.length === 0) return messages;

  ranges.sort((a, b) => a.start - b.start);
  const out: ContextMessage[] = [];
  let next = 0;
  for (const r of ranges) {
    if (r.start < next) continue; // overlapping records: the earlier one wins
    for (let i = next; i < r.start; i++) out.push(messages[i]);
    out.push(chainMessage(r.chain));
    for (let i = r.start; i <= r.end; i++) if (isSystemMessage(messages[i])) out.push(messages[i]);
    next = r.end + 1;
  }
  for (let i = next; i < messages.length; i++) out.push(messages[i]);
  return out;
};
