/**
 * Phase 3: closed tool chains recorded in the frontier collapse into one synthetic user
 * message carrying the chain's summaries (text fixed at the flush). The prompt before the
 * chain and the final text answer after it are kept; the tool-use assistants and their
 * results in between are dropped. A system message inside the chain (a prompt section or a
 * tool Pi declared mid-loop) is kept, right after the summary: what it declares holds for the
 * rest of the session. A recorded chain whose range no longer matches
 * exactly (different length, end timestamp, or not self-contained) is left alone — except
 * the one a compaction cut into: its head summarized, what is left of it (right after Pi's
 * summary message, up to its recorded end) still collapses, with the same text.
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

  // Pi's compaction summary at the head of the context (after the transcript's system messages), if any.
  let summaryAt = 0;
  while (summaryAt < messages.length && (messages[summaryAt] as { role?: string }).role === "system") summaryAt++;
  if ((messages[summaryAt] as { role?: string } | undefined)?.role !== "compactionSummary") summaryAt = -1;

  /** The chain's recorded range, where it still stands whole. */
  const wholeRange = (chain: CompressedChain): { start: number; end: number } | undefined => {
    const start = startByFirstKey.get(chain.firstCallKey);
    if (start === undefined || timestampOf(messages[start]) !== chain.fromTimestamp) return undefined;
    const end = start + chain.messageCount - 1;
    return timestampOf(messages[end]) === chain.toTimestamp ? { start, end } : undefined;
  };
  /** What a compaction left of the chain: from right after Pi's summary (a member's call there) to its recorded end. */
  const remnantRange = (chain: CompressedChain): { start: number; end: number } | undefined => {
    if (summaryAt < 0) return undefined;
    const start = summaryAt + 1;
    const head = pairing.calls.find((c) => c.assistantIndex === start);
    if (!head || !chain.memberKeys.includes(head.key)) return undefined;
    for (let end = start; end < Math.min(messages.length, start + chain.messageCount); end++) if (timestampOf(messages[end]) === chain.toTimestamp) return { start, end };
    return undefined;
  };

  // Each assistant's first call key (before the current loop) -> its index; the earliest wins.
  const startByFirstKey = new Map<string, number>();
  for (const c of pairing.calls) {
    if (c.assistantIndex >= loopStart) break;
    if (c.callIndex === 0 && !startByFirstKey.has(c.key)) startByFirstKey.set(c.key, c.assistantIndex);
  }

  const ranges: { start: number; end: number; chain: CompressedChain }[] = [];
  for (const chain of chains) {
    const range = wholeRange(chain) ?? remnantRange(chain);
    if (!range || range.end + 1 >= loopStart) continue;
    if (!isCollapsibleRange(messages, range.start, range.end, pairing)) continue;
    ranges.push({ ...range, chain });
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
