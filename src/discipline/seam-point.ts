/**
 * Where the seam mark should sit until the next flush: right before the first message that
 * flush is expected to change, so its rewrite reads everything before it back from the cache.
 *
 * A request-end flush changes history where (a) a chain becomes old enough to collapse (the
 * engine's `nextChainStarts`: the chains the next flush would collapse once the next prompt has
 * come, or with `rollingWindow` 0 the running loop's own chain), (b) the gate held a mutation back (it is proposed again), (c) the thinking strip's
 * boundary moves over assistant messages that still carry thinking, or (d) for a flush inside a
 * running tool loop, the batches after the last answered one. The seam goes through the last
 * message before the earliest of these; with none of them expected, through the end of the
 * branch. Without a frozen boundary yet (nothing the discipline keeps stable) there is no seam.
 * Inside a running loop whose next in-loop flush the seam serves (`runningLoopStart`), thinking
 * in that loop is not counted: the strip never touches a running loop, and when the loop ends the
 * flush of its final answer collapses it from its start anyway.
 *
 * Pure: data in, a timestamp out.
 */
import { hasThinking, isAssistant, timestampOf, type ContextMessage } from "../session/messages.ts";

export interface SeamPointInput {
  /** The branch at the flush, closing message included (oldest first). */
  messages: readonly ContextMessage[];
  /** Raw indices where a change is already known to wait (gate-deferred mutations, chains due next). */
  waitingAt: readonly number[];
  /** The thinking boundary after this flush, when the thinking strip is on (undefined: off). */
  thinkingBoundaryTimestamp: number | undefined;
  thinkingStripOn: boolean;
  /** The frozen boundary this flush persists (undefined: none yet, no seam). */
  frozenThroughTimestamp: number | undefined;
  /** Start of the running loop the seam is placed inside of (its thinking is not counted); absent: none. */
  runningLoopStart?: number;
}

/** Raw index of the first message the next flush is expected to change (messages.length: none). */
export function firstExpectedChange(input: Omit<SeamPointInput, "frozenThroughTimestamp">): number {
  const { messages } = input;
  let first = messages.length;
  for (const i of input.waitingAt) if (i >= 0) first = Math.min(first, i);
  if (input.thinkingStripOn) {
    const boundary = input.thinkingBoundaryTimestamp ?? -Infinity;
    const end = input.runningLoopStart ?? messages.length;
    const i = messages.findIndex((m, j) => j < end && hasThinking(m) && (timestampOf(m) ?? -Infinity) >= boundary);
    if (i >= 0) first = Math.min(first, i);
  }
  // Inside a running loop the last batch has not been answered: the next flush stubs from there.
  const last = messages[messages.length - 1];
  if (last !== undefined && !isAssistant(last)) {
    for (let i = messages.length - 1; i >= 0; i--) {
      if (isAssistant(messages[i])) {
        first = Math.min(first, i);
        break;
      }
    }
  }
  return first;
}

/** Timestamp of the last message the seam covers, or undefined (no seam). */
export function seamPointTimestamp(input: SeamPointInput): number | undefined {
  if (input.frozenThroughTimestamp === undefined) return undefined;
  const first = firstExpectedChange(input);
  for (let i = first - 1; i >= 0; i--) {
    const t = timestampOf(input.messages[i]);
    if (t !== undefined) return t;
  }
  return undefined;
}
