/**
 * Preview of the context Pi will build after a compaction is applied: the branch as it is
 * now, plus a compaction entry carrying the ready summary. Messages appended after the
 * job's snapshot stay in the raw tail, verbatim and in order.
 */
import { estimateAllTokens } from "./prepare.ts";
import type { AgentMessage, PiCompactionPrimitives, SessionEntry } from "./primitives.ts";

export const PREVIEW_ENTRY_ID = "context-keeper-async-compaction-preview";

export interface ApplyPreview {
  messages: AgentMessage[];
  /** Chars/4 estimate, the figure Pi itself uses right after a compaction. */
  tokens: number;
}

export function previewAfterApply(
  branch: SessionEntry[],
  result: { summary: string; firstKeptEntryId: string; details?: unknown },
  prims: PiCompactionPrimitives,
  /** The messages as they will be sent (e.g. the keeper's pruned render); default: as built. */
  sent?: (messages: AgentMessage[]) => AgentMessage[],
): ApplyPreview {
  const leaf = branch[branch.length - 1];
  const system = prims.getCurrentSystemMessage(prims.buildSessionProjection(branch).messages);
  const entry = {
    type: "compaction",
    id: PREVIEW_ENTRY_ID,
    parentId: leaf?.id ?? null,
    timestamp: new Date(0).toISOString(),
    summary: result.summary,
    firstKeptEntryId: result.firstKeptEntryId,
    tokensBefore: 0,
    details: result.details,
    fromHook: true,
    ...(system ? { systemMessage: system } : {}),
  } as SessionEntry;
  const projection = prims.buildSessionProjection([...branch, entry], PREVIEW_ENTRY_ID);
  const messages = sent ? sent(projection.messages) : projection.messages;
  return { messages, tokens: estimateAllTokens(messages, prims) };
}
