/**
 * Catch-up at apply time: a job's cut is fixed when it starts, so everything appended while it
 * ran stays in the raw tail. Applied late (fast turns, a summary still running at Pi's
 * threshold) that tail is far larger than Pi's own `keepRecentTokens`, the context after the
 * apply is larger than bare Pi's after its compaction, and the next threshold comes sooner.
 *
 * `catchUpResult` moves the cut to where Pi would cut now and covers the gap between the two
 * cuts with a short extractive digest (no model call, so no wait): each message of the gap as
 * one line (user and assistant text cut short, tool calls with their arguments, tool results
 * with their status and size), the newest `DIGEST_MAX_LINES` of them. The file tags Pi appends are extended with the gap's files.
 * The next compaction's model summary merges the digest like any previous summary.
 * Pure: the branch, the ready result, the settings and Pi's helpers in; a result out.
 */
import type { ReadyCompaction } from "./job-reducer.ts";
import { catchUpCut, collectFileOps } from "./prepare.ts";
import type { AgentMessage, CompactionSettings, FileOperations, PiCompactionPrimitives, SessionEntry } from "./primitives.ts";

/** User and assistant text longer than this is cut (with an ellipsis). */
export const DIGEST_TEXT_CHARS = 300;
/** Tool-call argument values longer than this are cut. */
export const DIGEST_ARG_CHARS = 120;
export const DIGEST_HEADING = "**Progress after the summary (extractive digest):**";
/** At most this many digest lines (the newest); a longer gap says how many earlier lines were left out. */
export const DIGEST_MAX_LINES = 400;

export interface CatchUpInput {
  branch: SessionEntry[];
  result: ReadyCompaction;
  settings: Pick<CompactionSettings, "keepRecentTokens">;
  primitives: PiCompactionPrimitives;
}

export interface CatchUp {
  result: ReadyCompaction;
  /** The job's own cut, when the result was moved; undefined when it was already Pi's cut. */
  movedFrom?: string;
  gapMessages: number;
}

export function catchUpResult(input: CatchUpInput): CatchUp {
  const { branch, result, settings, primitives } = input;
  const cut = catchUpCut(branch, result.firstKeptEntryId, settings.keepRecentTokens, primitives);
  if (!cut || cut.gapMessages.length === 0) return { result, gapMessages: 0 };
  return { result: withGapDigest(result, cut), movedFrom: result.firstKeptEntryId, gapMessages: cut.gapMessages.length };
}

/**
 * `result` with its cut moved to `gap.firstKeptEntryId` and the gap's messages digested after
 * its summary (its file tags extended with the gap's files). Also how a late job's summary
 * upgrades the digest applied in its place (`late-digest.ts`).
 */
export function withGapDigest(result: ReadyCompaction, gap: { firstKeptEntryId: string; gapMessages: AgentMessage[] }): ReadyCompaction {
  if (gap.gapMessages.length === 0) return { ...result, firstKeptEntryId: gap.firstKeptEntryId };
  const lines = capLines(gap.gapMessages.flatMap((m) => digestLines(m)));
  const files = extendFileLists(result, gap.gapMessages);
  const body = files ? result.summary.slice(0, result.summary.length - files.oldTags.length) : result.summary;
  const summary = `${body}\n\n---\n\n${DIGEST_HEADING}\n\n${lines.join("\n")}${files ? files.newTags : ""}`;
  const details = files ? { ...(result.details as Record<string, unknown>), readFiles: files.readFiles, modifiedFiles: files.modifiedFiles } : result.details;
  return { ...result, summary, firstKeptEntryId: gap.firstKeptEntryId, ...(details === undefined ? {} : { details }) };
}

export function capLines(lines: string[]): string[] {
  if (lines.length <= DIGEST_MAX_LINES) return lines;
  return [`- (${lines.length - DIGEST_MAX_LINES} earlier lines of the digest left out)`, ...lines.slice(-DIGEST_MAX_LINES)];
}

function cutText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b: { type?: string; text?: unknown }) => (b?.type === "text" && typeof b.text === "string" ? b.text : "")).filter(Boolean).join("\n");
}

function argsText(args: unknown): string {
  if (!args || typeof args !== "object") return "";
  return Object.entries(args as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${cutText(typeof v === "string" ? v : JSON.stringify(v) ?? String(v), DIGEST_ARG_CHARS)}`)
    .join(", ");
}

function lineCount(text: string): number {
  return text === "" ? 0 : text.split("\n").length;
}

/**
 * One line per message (an assistant message: its text, then one line per tool call). User
 * text is cut at `userChars` (default `DIGEST_TEXT_CHARS`).
 */
export function digestLines(message: AgentMessage, opts: { userChars?: number } = {}): string[] {
  const m = message as { role?: string; content?: unknown; toolName?: string; isError?: boolean; command?: string; output?: string; exitCode?: number };
  switch (m.role) {
    case "user": {
      const text = textOf(m.content);
      return text ? [`- user: ${cutText(text, opts.userChars ?? DIGEST_TEXT_CHARS)}`] : [];
    }
    case "assistant": {
      const blocks = Array.isArray(m.content) ? (m.content as { type?: string; name?: string; arguments?: unknown }[]) : [];
      const text = textOf(m.content);
      const calls = blocks.filter((b) => b?.type === "toolCall").map((b) => `- called ${b.name}(${argsText(b.arguments)})`);
      return [...(text ? [`- assistant: ${cutText(text, DIGEST_TEXT_CHARS)}`] : []), ...calls];
    }
    case "toolResult": {
      const text = textOf(m.content);
      const first = m.isError ? `: ${cutText(text.split("\n")[0] ?? "", DIGEST_ARG_CHARS)}` : "";
      return [`  → ${m.toolName ?? "tool"} ${m.isError ? "error" : "ok"}, ${lineCount(text)} lines${first}`];
    }
    case "bashExecution":
      return [`- ran \`${cutText(m.command ?? "", DIGEST_ARG_CHARS)}\` → exit ${m.exitCode ?? "?"}, ${lineCount(m.output ?? "")} lines`];
    default: {
      const text = textOf(m.content);
      return text ? [`- ${m.role ?? "message"}: ${cutText(text, DIGEST_TEXT_CHARS)}`] : [];
    }
  }
}

/** Pi's `formatFileOperations`: the tags it appends to a summary (empty without files). */
export function fileTags(readFiles: readonly string[], modifiedFiles: readonly string[]): string {
  const sections: string[] = [];
  if (readFiles.length > 0) sections.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
  if (modifiedFiles.length > 0) sections.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
  return sections.length === 0 ? "" : `\n\n${sections.join("\n\n")}`;
}

interface ExtendedFiles {
  oldTags: string;
  newTags: string;
  readFiles: string[];
  modifiedFiles: string[];
}

/**
 * Pi's file lists (`details.readFiles` / `modifiedFiles`) plus the gap's, when the summary ends
 * with exactly the tags Pi made from them; undefined otherwise (another adapter's layout is left
 * alone and the digest goes at its end).
 */
function extendFileLists(result: ReadyCompaction, gap: AgentMessage[]): ExtendedFiles | undefined {
  const d = result.details as { readFiles?: unknown; modifiedFiles?: unknown } | undefined;
  const strings = (v: unknown) => (Array.isArray(v) && v.every((f) => typeof f === "string") ? (v as string[]) : undefined);
  const read = strings(d?.readFiles);
  const modified = strings(d?.modifiedFiles);
  if (!read || !modified) return undefined;
  const ops: FileOperations = { read: new Set(read), written: new Set(), edited: new Set(modified) };
  const oldTags = fileTags(read, modified);
  if (!result.summary.endsWith(oldTags)) return undefined;
  for (const m of gap) collectFileOps(m, ops);
  const modifiedFiles = [...new Set([...ops.edited, ...ops.written])].sort();
  const readFiles = [...ops.read].filter((f) => !modifiedFiles.includes(f)).sort();
  return { oldTags, newTags: fileTags(readFiles, modifiedFiles), readFiles, modifiedFiles };
}
