/**
 * Closed tool chains: within one user prompt's cycle, the run of tool-use assistant
 * turns and their results that ends just before a text-only final answer, closed by a
 * later user message.
 *
 *   user(prompt) [kept...] A(calls) R R A(calls) R ... A(text answer) [system...] user(next)
 *                          └──────────── chain ────────────┘
 *
 * After a compaction the context opens with Pi's summary message, and when the compaction
 * cut inside a loop its kept steps follow it with no prompt of their own: the summary opens
 * that cycle (it stands for the prompt it summarized), so the loop collapses like any other.
 *
 * Compression keeps the prompt and the final answer and replaces the chain with one
 * synthetic user message. A range is collapsible only when it is self-contained: every
 * member is an assistant with tool calls, a toolResult or a system message (a prompt or tool
 * patch Pi appended mid-loop, which the collapse keeps after the summary), every result
 * answers a call inside the range and every replayed call is answered inside it.
 */
import {
  type ContextMessage,
  isAssistant,
  isSystemMessage,
  isToolResult,
  isUser,
  toolCallsOf,
} from "../session/messages.ts";
import { type Pairing, firstCallAtOrAfter, isReplayedAssistant } from "./occurrence.ts";

export interface ClosedChain {
  /** Index of the prompt that opened the cycle (or of the compaction summary that stands for it). */
  promptIndex: number;
  /** First message of the chain (a tool-use assistant). */
  startIndex: number;
  /** Last message of the chain (inclusive). */
  endIndex: number;
  /** The text-only final answer right after the chain. */
  answerIndex: number;
  /** User messages after the final answer (at least 1: the chain is closed). */
  promptsAfter: number;
}

function isTextAnswer(m: ContextMessage): boolean {
  return (
    isAssistant(m) &&
    isReplayedAssistant(m) &&
    toolCallsOf(m).length === 0 &&
    m.content.some((b) => b.type === "text" && b.text.trim().length > 0)
  );
}

/**
 * Whether messages[start..end] can be replaced by one message (and the system messages among
 * them): members are tool-use assistants, results or system messages, pairing is closed inside
 * the range, a text-only answer follows, and a user message comes later (the cycle is closed).
 */
export function isCollapsibleRange(messages: readonly ContextMessage[], start: number, end: number, pairing: Pairing): boolean {
  if (start < 0 || end < start || end + 1 >= messages.length) return false;
  const first = messages[start];
  if (!isAssistant(first) || toolCallsOf(first).length === 0) return false;
  for (let i = start; i <= end; i++) {
    const m = messages[i];
    if (isToolResult(m)) {
      // Every result answers a call inside the range.
      const call = pairing.callByResultIndex.get(i);
      if (call === undefined || call.assistantIndex < start || call.assistantIndex > end) return false;
    } else if (isSystemMessage(m)) continue; // a prompt or tool patch Pi appended mid-loop: kept by the collapse
    else if (!(isAssistant(m) && toolCallsOf(m).length > 0)) return false;
  }
  // Every replayed call inside the range is answered inside it.
  for (let k = firstCallAtOrAfter(pairing, start); k < pairing.calls.length && pairing.calls[k].assistantIndex <= end; k++) {
    const c = pairing.calls[k];
    if (c.replayed && (c.resultIndex === undefined || c.resultIndex > end)) return false;
  }
  if (!isTextAnswer(messages[end + 1])) return false;
  for (let i = end + 2; i < messages.length; i++) if (isUser(messages[i])) return true;
  return false;
}

/** Pi's compaction summary at the head of the context: it opens the cycle whose prompt it summarized. */
function isCompactionSummary(m: ContextMessage): boolean {
  return (m as { role?: string }).role === "compactionSummary";
}

/** How many of the sorted `indices` are below `at`. */
function usersBefore(indices: readonly number[], at: number): number {
  let lo = 0;
  let hi = indices.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (indices[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Every closed chain, oldest first. */
export function findClosedChains(messages: readonly ContextMessage[], pairing: Pairing): ClosedChain[] {
  const userIndices: number[] = [];
  const openers: number[] = [];
  messages.forEach((m, i) => {
    if (isUser(m)) userIndices.push(i);
    if (isUser(m) || isCompactionSummary(m)) openers.push(i);
  });
  const chains: ClosedChain[] = [];
  for (let k = 0; k + 1 < openers.length; k++) {
    const promptIndex = openers[k];
    const nextPrompt = openers[k + 1];
    // The final answer: the last message of the cycle apart from system messages.
    let answerIndex = nextPrompt - 1;
    while (answerIndex > promptIndex && isSystemMessage(messages[answerIndex])) answerIndex--;
    if (answerIndex <= promptIndex || !isTextAnswer(messages[answerIndex])) continue;
    let startIndex = -1;
    for (let i = promptIndex + 1; i < answerIndex; i++) {
      const m = messages[i];
      if (isAssistant(m) && toolCallsOf(m).length > 0) {
        startIndex = i;
        break;
      }
    }
    if (startIndex < 0) continue;
    const endIndex = answerIndex - 1;
    if (!isCollapsibleRange(messages, startIndex, endIndex, pairing)) continue;
    chains.push({
      promptIndex,
      startIndex,
      endIndex,
      answerIndex,
      promptsAfter: userIndices.length - usersBefore(userIndices, nextPrompt),
    });
  }
  return chains;
}
