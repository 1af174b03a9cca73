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
  /** The images the result carried beside its text (absent: none). Their data stays in the session; recall reads it there. */
  images?: ResultImage[];
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

/** An image of a tool result, as a summary describes it. */
export interface ResultImage {
  mimeType: string;
  /** Decoded size. */
  bytes: number;
}

/**
 * What an image weighs against text when deciding whether a batch is worth pruning and whether
 * its summary is shorter: the token estimator's flat 1,600 tokens per image, at the 3.1
 * characters a token of tool output the summary sizes use.
 */
export const IMAGE_WEIGHT_CHARS = 4_960;

/** A call's output size for pruning decisions: its text, and its images at `IMAGE_WEIGHT_CHARS` each. */
export function resultWeight(call: Pick<CapturedCall, "resultText" | "images">): number {
  return call.resultText.length + (call.images?.length ?? 0) * IMAGE_WEIGHT_CHARS;
}

function sizeLabel(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * `1 image left out (image/png, 3.4 KB): keeper_recall of this ref returns it` — what a stub or a
 * chain's call line says of a pruned result's images; undefined when it had none.
 */
export function imageNote(images: readonly ResultImage[] | undefined): string | undefined {
  if (!images || images.length === 0) return undefined;
  const list = images.map((i) => `${i.mimeType}, ${sizeLabel(i.bytes)}`).join("; ");
  return `${images.length} image${images.length > 1 ? "s" : ""} left out (${list}): keeper_recall of this ref returns ${images.length > 1 ? "them" : "it"}`;
}
