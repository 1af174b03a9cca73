/**
 * Recover an original verbatim: from the raw session messages when the branch still holds
 * it, else from its spill file. Either way its sha256 must match the index. When the index
 * cannot answer (no entry, or an entry that matches nothing), the ref alone finds the
 * original on the branch (`findResultByRef`).
 */
import { pairToolCalls } from "../prune/occurrence.ts";
import { type ContextMessage, type ImageContent, isAssistant, isToolResult, timestampOf, toolCallsOf, toolResultImages, toolResultText } from "../session/messages.ts";
import { sha256Hex } from "../summarize/text-measure.ts";
import type { RecallEntry } from "./recall-index.ts";

/** The images the original carried beside its text, when it came from the session (a spill holds the text only). */
type WithImages = { images?: ImageContent[] };

export type OriginalLookup =
  | ({ ok: true; text: string; from: "session" | "spill" } & WithImages)
  | { ok: false; reason: string };

const imagesOf = (m: Parameters<typeof toolResultImages>[0]): WithImages => {
  const images = toolResultImages(m);
  return images.length > 0 ? { images } : {};
};

export type ReadSpill = (path: string) => Promise<string>;

/** The tool result in `messages` that is this entry's original (its text and images), if the branch holds it. */
export function findOriginalInMessages(entry: RecallEntry, messages: readonly ContextMessage[]): ({ text: string } & WithImages) | undefined {
  let fallback: ({ text: string } & WithImages) | undefined;
  for (const m of messages) {
    if (!isToolResult(m) || m.toolCallId !== entry.toolCallId) continue;
    const text = toolResultText(m);
    if (sha256Hex(text) !== entry.sha256) continue;
    if (m.timestamp === entry.timestamp) return { text, ...imagesOf(m) };
    fallback ??= { text, ...imagesOf(m) }; // same id and same bytes: the same original whatever its timestamp
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
  if (fromSession !== undefined) return { ok: true, ...fromSession, from: "session" };
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

export type RefOnBranch =
  | ({ ok: true; text: string; toolCallId: string; toolName: string; isError: boolean; timestamp: number | undefined } & WithImages)
  | { ok: false; reason: string };

const REF_PATTERN = /^(.+)@(-?\d+)#(\d+)$/;

/**
 * The tool result a ref (`<toolCallId>@<assistant timestamp>#<n>`) names, found on the branch
 * by the same pairing the render uses: the n-th call with that id in the assistant message of
 * that timestamp, and the result answering it. A ref is an occurrence key, so this finds
 * exactly the result a stub replaced. When it finds nothing, the reason names which step failed.
 */
export function findResultByRef(messages: readonly ContextMessage[], ref: string): RefOnBranch {
  const parsed = REF_PATTERN.exec(ref.trim());
  if (!parsed) return { ok: false, reason: `"${ref}" is not a ref (refs look like <tool-call id>@<timestamp>#<n>)` };
  const [, toolCallId, tsText, nText] = parsed as unknown as [string, string, string, string];
  const timestamp = Number(tsText);
  const ordinal = Number(nText);
  const assistants = messages.filter((m) => isAssistant(m) && timestampOf(m) === timestamp);
  if (assistants.length === 0) return { ok: false, reason: `the current branch has no assistant message at ${timestamp}` };
  const sameId = Math.max(...assistants.map((m) => toolCallsOf(m).filter((c) => c.id === toolCallId).length));
  if (sameId === 0) return { ok: false, reason: `the assistant message at ${timestamp} does not call "${toolCallId}"` };
  if (ordinal >= sameId) return { ok: false, reason: `the assistant message at ${timestamp} has ${sameId} call(s) of "${toolCallId}", no #${ordinal}` };
  const call = pairToolCalls(messages).calls.find((c) => c.key === ref.trim());
  const r = call?.resultIndex === undefined ? undefined : messages[call.resultIndex];
  if (!call || !r || !isToolResult(r)) return { ok: false, reason: `the call ${ref} has no result on the current branch` };
  return { ok: true, text: toolResultText(r), ...imagesOf(r), toolCallId, toolName: r.toolName, isError: r.isError, timestamp: timestampOf(r) };
}
