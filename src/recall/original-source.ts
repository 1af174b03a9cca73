/**
 * Recover an original verbatim: from the raw session messages when the branch still holds
 * it, else from its spill file. Either way its sha256 must match the index.
 */
import { type ContextMessage, isToolResult, toolResultText } from "../session/messages.ts";
import { sha256Hex } from "../summarize/text-measure.ts";
import type { RecallEntry } from "./recall-index.ts";

export type OriginalLookup =
  | { ok: true; text: string; from: "session" | "spill" }
  | { ok: false; reason: string };

export type ReadSpill = (path: string) => Promise<string>;

/** The tool result in `messages` that is this entry's original, if the branch holds it. */
export function findOriginalInMessages(entry: RecallEntry, messages: readonly ContextMessage[]): string | undefined {
  let fallback: string | undefined;
  for (const m of messages) {
    if (!isToolResult(m) || m.toolCallId !== entry.toolCallId) continue;
    const text = toolResultText(m);
    if (sha256Hex(text) !== entry.sha256) continue;
    if (m.timestamp === entry.timestamp) return text;
    fallback ??= text; // same id and same bytes: the same original whatever its timestamp
  }
  return fallback;
}

export async function resolveOriginal(options: {
  entry: RecallEntry;
  branchMessages: readonly ContextMessage[];
  readSpill?: ReadSpill;
}): Promise<OriginalLookup> {
  const { entry } = options;
  const fromSession = findOriginalInMessages(entry, options.branchMessages);
  if (fromSession !== undefined) return { ok: true, text: fromSession, from: "session" };
  if (entry.spillPath === undefined) {
    return { ok: false, reason: "The original is not on the current branch of this session and was not spilled to a file." };
  }
  if (!options.readSpill) return { ok: false, reason: `The original is in ${entry.spillPath}, but no spill reader is available.` };
  let text: string;
  try {
    text = await options.readSpill(entry.spillPath);
  } catch (error) {
    return { ok: false, reason: `Could not read ${entry.spillPath}: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (sha256Hex(text) !== entry.sha256) return { ok: false, reason: `${entry.spillPath} no longer matches the original (sha256 differs).` };
  return { ok: true, text, from: "spill" };
}
