/**
 * Where history may be cut without splitting a tool call from its result.
 *
 * A *cut* k sits between message k-1 and message k of the raw branch (cut 0 = before
 * everything, cut n = after everything). Cut k is *closed* when no tool call made before it
 * still waits for a result after it.
 *
 * Pending calls are settled by their `toolResult` (matched by id, counted, because providers
 * reuse ids within a session) or, as pi-ai does on the wire, by the next non-toolResult
 * message: pi-ai inserts a synthetic result for an orphaned call when a new assistant or
 * user turn arrives, and drops errored/aborted assistant messages altogether. Without that
 * rule one orphaned call would keep every later cut open forever.
 */
import { isAssistant, isToolResult, toolCallsOf, type ContextMessage } from "../session/messages.ts";

/** closed[k] for k = 0..messages.length. */
export function closedCuts(messages: readonly ContextMessage[]): boolean[] {
  const closed: boolean[] = [true];
  const pending = new Map<string, number>();
  let pendingCount = 0;
  const settleAll = (): void => {
    pending.clear();
    pendingCount = 0;
  };
  for (const m of messages) {
    if (isToolResult(m)) {
      const left = pending.get(m.toolCallId) ?? 0;
      if (left > 0) {
        pending.set(m.toolCallId, left - 1);
        pendingCount--;
      }
    } else {
      // A new turn settles orphans (synthetic results on the wire).
      settleAll();
      if (isAssistant(m) && m.stopReason !== "error" && m.stopReason !== "aborted") {
        for (const c of toolCallsOf(m)) {
          pending.set(c.id, (pending.get(c.id) ?? 0) + 1);
          pendingCount++;
        }
      }
    }
    closed.push(pendingCount === 0);
  }
  return closed;
}

/** Cut positions in messages: position(k) = k. */
export function messageCutPositions(count: number): number[] {
  return Array.from({ length: count + 1 }, (_, k) => k);
}

/** Cut positions in tokens: position(k) = tokens of messages[0..k). */
export function tokenCutPositions(messages: readonly ContextMessage[], tokensOf: (m: ContextMessage) => number): number[] {
  const out = [0];
  let sum = 0;
  for (const m of messages) {
    sum += Math.max(0, tokensOf(m));
    out.push(sum);
  }
  return out;
}
