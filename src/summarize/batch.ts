/**
 * The unit of pruning: one finished tool batch (an assistant message's tool calls plus
 * their results), captured at `turn_end` and summarized at a flush.
 */

/** One tool call and its result, identified by occurrence, never by provider id alone. */
export interface CapturedCall {
  /** Unique within a session: `${toolCallId}@${assistantTimestamp}#${n}`, n = position among calls with the same id in that message (see `callKeysOf`). */
  occurrenceKey: string;
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  /** Concatenated text of the tool result, verbatim. */
  resultText: string;
  isError: boolean;
  assistantTimestamp: number;
  resultTimestamp: number;
}

export interface ToolBatch {
  /** Unique within a session: the occurrence key of the batch's assistant message. */
  batchKey: string;
  assistantTimestamp: number;
  calls: CapturedCall[];
}

export type SummarySource = "model" | "extractive" | "raw";

export interface BatchSummary {
  batchKey: string;
  text: string;
  /** `raw` means the summary would have been longer than the output, so the output stays. */
  source: SummarySource;
  inputTokens: number;
  outputTokens: number;
  /**
   * Dollars, as reported by pi-ai's usage cost: of the model call that made the summary, or of
   * a failed or stopped one an extractive summary replaced (0 when no call was made).
   */
  cost: number;
}

export function occurrenceKey(toolCallId: string, assistantTimestamp: number, indexInMessage: number): string {
  return `${toolCallId}@${assistantTimestamp}#${indexInMessage}`;
}
