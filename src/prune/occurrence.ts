/**
 * Tool-call occurrences and call/result pairing.
 *
 * Provider tool-call ids are not unique within a session (some providers number them per
 * run, `bash_23`; ids come back after a compaction), so every call and result is keyed by
 * occurrence: `${toolCallId}@${assistantTimestamp}#${n}` where `n` is the call's ordinal
 * among the calls *with the same id* in that message (almost always 0). Counting same-id
 * calls only means that removing other blocks — thinking, text, or an unanswered call
 * dropped by the pairing sweep — never changes a key (an unanswered same-id call is always
 * a later one, since results answer same-id calls in order).
 *
 * Pairing follows what the provider will accept (and what pi-ai's message transform
 * does): a result answers a call of the nearest preceding assistant message, provided
 * that assistant is replayed (pi-ai drops `error`/`aborted` assistants) and no
 * flow-breaking message (anything but assistant, toolResult or system — user, custom,
 * summaries, bash executions all reach the provider as user turns) sits in between. A
 * result that pairs by id with an older assistant only would be an orphan on the wire,
 * so it is reported as one here.
 */
import { occurrenceKey } from "../summarize/batch.ts";
import {
  type AssistantMessage,
  type ContextMessage,
  isAssistant,
  isToolResult,
  isUser,
  timestampOf,
  toolCallsOf,
} from "../session/messages.ts";

export interface CallOccurrence {
  key: string;
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  /** Index of the assistant message in the array that was paired. */
  assistantIndex: number;
  /** Index among the message's tool-call blocks. */
  callIndex: number;
  /** Ordinal among the message's calls with the same id (the `#n` of the key). */
  ordinal: number;
  assistantTimestamp: number;
  /** False for calls of `error`/`aborted` assistants, which pi-ai never sends. */
  replayed: boolean;
  /** Index of the answering toolResult, when there is one. */
  resultIndex?: number;
}

export interface Pairing {
  /** Every tool call in message order. */
  calls: CallOccurrence[];
  /** toolResult index -> occurrence key of the call it answers. */
  callKeyByResultIndex: Map<number, string>;
  /** toolResult index -> the call it answers. */
  callByResultIndex: Map<number, CallOccurrence>;
  /** Indices of toolResult messages that answer no replayed call. */
  orphanResults: number[];
  /** Replayed calls without a result. */
  unansweredCalls: CallOccurrence[];
}

/** Assistant timestamp used in keys; -1 when a message lacks one (never seen in Pi 1.x). */
export function assistantTimestampOf(m: ContextMessage): number {
  return timestampOf(m) ?? -1;
}

/** Whether pi-ai replays this assistant message to the provider. */
export function isReplayedAssistant(m: AssistantMessage): boolean {
  return m.stopReason !== "error" && m.stopReason !== "aborted";
}

/** Key of a batch: named after its assistant message's first tool call. */
export function batchKeyOf(firstToolCallId: string, assistantTimestamp: number): string {
  return `batch:${firstToolCallId}@${assistantTimestamp}`;
}

/** Per call, its ordinal among the calls with the same id before it in the list. */
function sameIdOrdinals(ids: readonly string[]): number[] {
  const seen = new Map<string, number>();
  return ids.map((id) => {
    const n = seen.get(id) ?? 0;
    seen.set(id, n + 1);
    return n;
  });
}

/** The occurrence keys of every tool call of one assistant message, in block order. */
export function callKeysOf(m: ContextMessage): string[] {
  const ts = assistantTimestampOf(m);
  const calls = toolCallsOf(m);
  const ordinals = sameIdOrdinals(calls.map((c) => c.id));
  return calls.map((c, i) => occurrenceKey(c.id, ts, ordinals[i]));
}

function breaksToolFlow(m: ContextMessage): boolean {
  const role = (m as { role?: string }).role;
  return role !== "assistant" && role !== "toolResult" && role !== "system";
}

export function pairToolCalls(messages: readonly ContextMessage[]): Pairing {
  const calls: CallOccurrence[] = [];
  const callKeyByResultIndex = new Map<number, string>();
  const callByResultIndex = new Map<number, CallOccurrence>();
  const orphanResults: number[] = [];
  // The calls of the nearest preceding replayed assistant still in the tool flow: calls[openFrom..openTo).
  let openFrom = 0;
  let openTo = 0;

  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (isAssistant(m)) {
      const replayed = isReplayedAssistant(m);
      const ts = assistantTimestampOf(m);
      const first = calls.length;
      let callIndex = 0;
      for (const c of m.content) {
        if (c.type !== "toolCall") continue;
        // Ordinal among this message's calls with the same id (almost always 0).
        let ordinal = 0;
        for (let k = first; k < calls.length; k++) if (calls[k].toolCallId === c.id) ordinal++;
        calls.push({
          key: occurrenceKey(c.id, ts, ordinal),
          toolCallId: c.id,
          toolName: c.name,
          arguments: (c.arguments ?? {}) as Record<string, unknown>,
          assistantIndex: i,
          callIndex: callIndex++,
          ordinal,
          assistantTimestamp: ts,
          replayed,
        });
      }
      openFrom = first;
      openTo = replayed ? calls.length : first;
    } else if (isToolResult(m)) {
      let match: CallOccurrence | undefined;
      for (let k = openFrom; k < openTo; k++) {
        const c = calls[k];
        if (c.resultIndex === undefined && c.toolCallId === m.toolCallId) {
          match = c;
          break;
        }
      }
      if (match) {
        match.resultIndex = i;
        callKeyByResultIndex.set(i, match.key);
        callByResultIndex.set(i, match);
      } else {
        orphanResults.push(i);
      }
    } else if (breaksToolFlow(m)) {
      openFrom = openTo = calls.length;
    }
  }

  const unansweredCalls = calls.filter((c) => c.replayed && c.resultIndex === undefined);
  return { calls, callKeyByResultIndex, callByResultIndex, orphanResults, unansweredCalls };
}

/**
 * Start of the current tool loop: the index just after the last user message (0 when
 * there is none, so that a context without a user prompt is treated as all loop and
 * left untouched). No render phase may alter messages at or after this index.
 */
export function currentLoopStart(messages: readonly ContextMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isUser(messages[i])) return i + 1;
  return 0;
}

/** Index in `pairing.calls` of the first call of an assistant at or after message `index` (calls are in message order). */
export function firstCallAtOrAfter(pairing: Pairing, index: number): number {
  let lo = 0;
  let hi = pairing.calls.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pairing.calls[mid].assistantIndex < index) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Occurrence keys of every tool call present in `messages` (what is still in context). */
export function liveOccurrenceKeys(messages: readonly ContextMessage[]): Set<string> {
  const keys = new Set<string>();
  for (const m of messages) for (const k of callKeysOf(m)) keys.add(k);
  return keys;
}
