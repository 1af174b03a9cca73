/**
 * The thinking-strip boundary: an assistant-message timestamp, recomputed from scratch at each
 * flush and persisted on the frontier. Renders only read it, so between two flushes the strip
 * is frozen and the historical prefix stays byte-stable.
 *
 * Keyed by timestamp, not by array index: chain compression drops messages from the middle of
 * the rendered array, and a timestamp comparison is unaffected by such drops.
 */
import { isAssistant, timestampOf, type ContextMessage } from "../session/messages.ts";
import { clampKeepLastTurns } from "./keep-last-turns.ts";

/**
 * Timestamp of the (count - keep)-th assistant message (0-based), i.e. the oldest of the last
 * `keep` assistant messages: everything strictly older than it loses its thinking.
 *
 * - keep = max(1, keepLastTurns), so `keepLastTurns = 0` never indexes past the end;
 * - count <= keep: nothing to strip yet, `prev` is returned unchanged (possibly undefined);
 * - otherwise max(prev ?? candidate, candidate): the boundary only moves forward, so raising
 *   keepLastTurns mid-session never gives thinking back to an already-stripped message.
 */
export function computeThinkingBoundary(
  assistantTimestamps: readonly number[],
  keepLastTurns: number,
  prev?: number | null,
): number | undefined {
  const previous = prev ?? undefined;
  const keep = clampKeepLastTurns(keepLastTurns);
  const count = assistantTimestamps.length;
  if (count <= keep) return previous;
  const candidate = assistantTimestamps[count - keep]!;
  return Math.max(previous ?? candidate, candidate);
}

export interface BoundaryAtFlushInput {
  /** The raw session branch's messages, in order (session entries already unwrapped). */
  branchMessages: readonly ContextMessage[];
  /**
   * The message whose `message_end` triggered the flush. Pi persists it after the event, so
   * it may be missing from the branch; counted when it is an assistant message whose
   * timestamp the branch's assistant messages do not already carry.
   */
  closingMessage?: ContextMessage;
  keepLastTurns: number;
  /** The persisted boundary, if any. */
  prev?: number | null;
}

/** Assistant-message timestamps of the branch plus the not-yet-persisted closing message. */
export function assistantTimestampsAtFlush(
  branchMessages: readonly ContextMessage[],
  closingMessage?: ContextMessage,
): number[] {
  const stamps: number[] = [];
  for (const m of branchMessages) {
    if (!isAssistant(m)) continue;
    const t = timestampOf(m);
    if (t !== undefined) stamps.push(t);
  }
  if (closingMessage !== undefined && isAssistant(closingMessage)) {
    const t = timestampOf(closingMessage);
    if (t !== undefined && !stamps.includes(t)) stamps.push(t);
  }
  return stamps;
}

export function boundaryAtFlush(input: BoundaryAtFlushInput): number | undefined {
  const stamps = assistantTimestampsAtFlush(input.branchMessages, input.closingMessage);
  return computeThinkingBoundary(stamps, input.keepLastTurns, input.prev);
}

/**
 * The boundary a render should pass to `stripOldThinking`.
 *
 * `computeThinkingBoundary` returns `undefined` while a session has no more than
 * keepLastTurns assistant messages, and `stripOldThinking` reads `undefined` as "use the live
 * count", which slides one message per render: a first long tool loop that crosses
 * keepLastTurns would then rewrite history on every call. Once a flush has run, "no boundary
 * yet" means "strip nothing": `-Infinity` is older than every timestamp. The live count is
 * left for sessions that never flushed under this design (e.g. older persisted frontiers).
 * Not meant to be persisted: JSON turns `-Infinity` into `null`.
 */
export function boundaryForRender(options: { persisted: number | null | undefined; hasFlushed: boolean }): number | undefined {
  if (typeof options.persisted === "number" && !Number.isNaN(options.persisted)) return options.persisted;
  return options.hasFlushed ? Number.NEGATIVE_INFINITY : undefined;
}
