/**
 * Capture: the finished tool batches of the branch that no summary covers yet.
 *
 * A batch is one replayed assistant message's tool calls whose results are all present.
 * Protected calls (tools or paths) are left out of it, and so are `keeper_recall` calls: their
 * output is a copy of an original the recall index already holds, so it is never summarized or
 * stubbed — it stays raw while its tool loop does and leaves with it (`plan-chains.ts`). An output identical to one already
 * summarized is not sent to the summarizer again: it is reported as a duplicate to alias.
 * A batch whose remaining result text is shorter than `minBatchChars` is skipped (an image
 * counts as `IMAGE_WEIGHT_CHARS`). Inside a
 * running tool loop (the branch ends with results the model has not answered), the batches of
 * the loop's last `loopFlush.keepRecentSteps` steps are left raw ("recent"; the unanswered one
 * is "unseen"): the model works from its last few outputs.
 */
import { type CapturedCall, type ToolBatch, resultWeight } from "../summarize/batch.ts";
import { type ContextMessage, type ToolResultMessage, base64Bytes, isToolResult, timestampOf, toolResultImages, toolResultText } from "../session/messages.ts";
import type { KeeperState, SummaryRecord } from "../state/schema.ts";
import type { PruneConfig } from "../prune/config.ts";
import { type CallOccurrence, batchKeyOf, pairToolCalls } from "../prune/occurrence.ts";
import { protectionMatcher } from "../prune/protection.ts";
import { isRecallCopy } from "../prune/config.ts";
import { contentHash } from "./content-hash.ts";
import { loopShapeOf } from "../discipline/loop-horizon.ts";
import { recentStepsFrom } from "./loop-candidates.ts";

/** Outputs shorter than this are never aliased (the stub would not be shorter). */
export const MIN_DUPLICATE_CHARS = 400;

/** One paired call and its result as a captured call (`resultText` when already computed). */
export function capturedCallOf(call: CallOccurrence, result: ToolResultMessage, resultText: string = toolResultText(result)): CapturedCall {
  const images = toolResultImages(result).map((i) => ({ mimeType: i.mimeType, bytes: base64Bytes(i.data) }));
  return {
    occurrenceKey: call.key,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: call.arguments,
    resultText,
    ...(images.length > 0 ? { images } : {}),
    isError: result.isError,
    assistantTimestamp: call.assistantTimestamp,
    resultTimestamp: timestampOf(result) ?? call.assistantTimestamp,
  };
}

export interface CaptureInput {
  /** Messages of the session branch, oldest first (message entries unwrapped). */
  branchMessages: readonly ContextMessage[];
  /** The just-finished assistant message when Pi has not persisted it yet. */
  closingMessage?: ContextMessage;
  state: KeeperState;
  config: PruneConfig;
}

export interface DuplicateOutput {
  occurrenceKey: string;
  /** Key of the identical output an existing (non-raw) summary covers. */
  aliasOf: string;
  batchKey: string;
}

export type SkipReason = "trivial" | "protected" | "recall" | "unfinished" | "duplicates-only" | "unseen" | "recent";

export interface CaptureResult {
  batches: ToolBatch[];
  duplicates: DuplicateOutput[];
  skipped: { batchKey: string; reason: SkipReason }[];
}

/** Branch plus the closing message, unless the branch already ends with it. */
export function withClosingMessage(branch: readonly ContextMessage[], closing?: ContextMessage): ContextMessage[] {
  if (!closing) return branch.slice();
  const last = branch[branch.length - 1];
  const same =
    last === closing ||
    (last !== undefined &&
      (last as { role?: string }).role === (closing as { role?: string }).role &&
      timestampOf(last) === timestampOf(closing));
  return same ? branch.slice() : [...branch, closing];
}

/** Content hash -> occurrence key, over outputs covered by summaries that render as stubs. */
export function summarizedOutputIndex(state: KeeperState): Map<string, string> {
  const index = new Map<string, string>();
  for (const r of Object.values(state.summaries)) {
    if (r.summary.source === "raw") continue;
    for (const [key, hash] of Object.entries(r.outputHashes)) if (!index.has(hash)) index.set(hash, key);
  }
  return index;
}

function groupByAssistant(calls: CallOccurrence[]): CallOccurrence[][] {
  const groups = new Map<number, CallOccurrence[]>();
  for (const c of calls) {
    if (!c.replayed) continue;
    const g = groups.get(c.assistantIndex);
    if (g) g.push(c);
    else groups.set(c.assistantIndex, [c]);
  }
  return [...groups.values()];
}

/**
 * Index of the assistant message whose tool results the model has not answered yet (the
 * branch ends with its results: a budget flush at `turn_end`), or -1. Its batch is not
 * captured: the model must see every output raw at least once.
 */
export function unseenAssistantIndex(messages: readonly ContextMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: string };
    if (m.role === "assistant") return i;
    if (m.role !== "toolResult") return -1;
  }
  return -1;
}

/** Inside a running loop, the raw index from which its last `keepRecentSteps` steps start; past the end otherwise. */
function recentInLoopFrom(messages: readonly ContextMessage[], config: PruneConfig, unseen: number): number {
  if (unseen < 0) return messages.length;
  const shape = loopShapeOf(messages);
  return shape.running ? recentStepsFrom(shape, Math.max(1, config.loopFlush.keepRecentSteps), messages.length) : messages.length;
}

export function captureBatches(input: CaptureInput): CaptureResult {
  const result: CaptureResult = { batches: [], duplicates: [], skipped: [] };
  if (!input.config.enabled) return result;
  const messages = withClosingMessage(input.branchMessages, input.closingMessage);
  const pairing = pairToolCalls(messages);
  const protection = protectionMatcher(input.config);
  const known = summarizedOutputIndex(input.state);
  const aliased = input.state.frontier.aliases;

  const unseen = unseenAssistantIndex(messages);
  const recentFrom = recentInLoopFrom(messages, input.config, unseen);
  for (const group of groupByAssistant(pairing.calls)) {
    const first = group[0];
    const batchKey = batchKeyOf(first.toolCallId, first.assistantTimestamp);
    const record = input.state.summaries[batchKey];
    if (record) {
      // Summarized already; a duplicate beside it is aliased at that flush — unless that
      // flush's frontier never landed (torn) or the alias was held back: propose it again.
      result.duplicates.push(...pendingDuplicates({ group, record, messages, known, aliased, protection }));
      continue;
    }

    if (group.some((c) => c.resultIndex === undefined)) {
      result.skipped.push({ batchKey, reason: "unfinished" });
      continue;
    }
    // Not even aliased: the model gets every output of its latest batch as it came.
    if (first.assistantIndex === unseen) {
      result.skipped.push({ batchKey, reason: "unseen" });
      continue;
    }
    if (first.assistantIndex >= recentFrom) {
      result.skipped.push({ batchKey, reason: "recent" });
      continue;
    }
    const calls: CapturedCall[] = [];
    let sawDuplicate = false;
    let sawProtected = false;
    let sawRecall = false;
    for (const c of group) {
      if (protection.isProtected(c.toolName, c.arguments)) {
        sawProtected = true;
        continue;
      }
      if (isRecallCopy(c.toolName)) {
        sawRecall = true;
        continue;
      }
      if (aliased[c.key] !== undefined) {
        sawDuplicate = true;
        continue;
      }
      const resultMessage = messages[c.resultIndex as number];
      if (!isToolResult(resultMessage)) continue;
      const resultText = toolResultText(resultMessage);
      const same = resultText.length >= MIN_DUPLICATE_CHARS ? known.get(contentHash(resultText)) : undefined;
      if (same !== undefined && same !== c.key) {
        result.duplicates.push({ occurrenceKey: c.key, aliasOf: same, batchKey });
        sawDuplicate = true;
        continue;
      }
      calls.push(capturedCallOf(c, resultMessage, resultText));
    }
    if (calls.length === 0) {
      // A call whose answer is not a tool result counts as not finished.
      result.skipped.push({ batchKey, reason: sawDuplicate ? "duplicates-only" : sawProtected ? "protected" : sawRecall ? "recall" : "unfinished" });
      continue;
    }
    // An image weighs what the estimator charges for it: a read of a picture is not trivial.
    const chars = calls.reduce((n, c) => n + resultWeight(c), 0);
    if (chars < input.config.minBatchChars) {
      result.skipped.push({ batchKey, reason: "trivial" });
      continue;
    }
    result.batches.push({ batchKey, assistantTimestamp: first.assistantTimestamp, calls });
  }
  return result;
}

/** Calls of a summarized batch its summary does not cover whose output matches a summarized one, not aliased yet. */
function pendingDuplicates(options: {
  group: CallOccurrence[];
  record: SummaryRecord;
  messages: readonly ContextMessage[];
  known: Map<string, string>;
  aliased: Record<string, string>;
  protection: ReturnType<typeof protectionMatcher>;
}): DuplicateOutput[] {
  const { group, record, messages, known, aliased, protection } = options;
  if (record.summary.source === "raw") return [];
  const covered = new Set(record.coveredKeys);
  const out: DuplicateOutput[] = [];
  for (const c of group) {
    if (covered.has(c.key) || aliased[c.key] !== undefined || c.resultIndex === undefined) continue;
    if (isRecallCopy(c.toolName) || protection.isProtected(c.toolName, c.arguments)) continue;
    const r = messages[c.resultIndex];
    if (!isToolResult(r)) continue;
    const text = toolResultText(r);
    const same = text.length >= MIN_DUPLICATE_CHARS ? known.get(contentHash(text)) : undefined;
    if (same !== undefined && same !== c.key) out.push({ occurrenceKey: c.key, aliasOf: same, batchKey: record.batchKey });
  }
  return out;
}
