/**
 * The one place the report reaches into Pi's runtime: Pi's own session loader rules
 * (`migrateSessionEntries` for old file versions, `buildSessionContext` for compactions,
 * branches, context edits, model changes, and `convertToLlm`) rebuild the context Pi sent
 * before each recorded assistant message: the branch up to the assistant entry's parent.
 */
import {
  buildSessionContext,
  convertToLlm,
  migrateSessionEntries,
  type FileEntry,
  type SessionEntry,
} from "@earendil-works/pi-coding-agent";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage, Message } from "@earendil-works/pi-ai";
import type { ParsedSessionText } from "./session-file.ts";

export interface RecordedRequestPoint {
  /** Id of the assistant entry this request produced (after migration). */
  entryId: string;
  /** Source line of the assistant entry (1-based). */
  line: number;
  assistant: AssistantMessage;
  /** Context Pi built for the request, as AgentMessages (what the `context` hook sees). */
  context: AgentMessage[];
  thinkingLevel: string;
}

export interface SessionRequestPoints {
  points: RecordedRequestPoint[];
  /** Number of user messages in the file (typed prompts and commands). */
  userMessages: number;
  /** Migrated entries (header excluded), for callers that want Pi's view. */
  entries: SessionEntry[];
}

export function recordedRequestPoints(parsed: ParsedSessionText): SessionRequestPoints {
  // Pi's migration mutates in place; work on copies so the caller's parse stays untouched.
  const all = parsed.entries.map((e) => structuredClone(e)) as unknown as FileEntry[];
  migrateSessionEntries(all);
  const lineById = new Map<string, number>();
  const entries: SessionEntry[] = [];
  all.forEach((e, i) => {
    if (e.type === "session") return;
    entries.push(e as SessionEntry);
    lineById.set((e as SessionEntry).id, parsed.lineOf[i]);
  });
  const byId = new Map(entries.map((e) => [e.id, e]));
  const points: RecordedRequestPoint[] = [];
  let userMessages = 0;
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const role = (entry.message as { role?: string }).role;
    if (role === "user") userMessages++;
    if (role !== "assistant" || !entry.parentId) continue;
    const ctx = buildSessionContext(entries, entry.parentId, byId);
    points.push({
      entryId: entry.id,
      line: lineById.get(entry.id) ?? 0,
      assistant: entry.message as AssistantMessage,
      context: ctx.messages,
      thinkingLevel: ctx.thinkingLevel,
    });
  }
  return { points, userMessages, entries };
}

/** Pi's conversion of context messages to LLM messages (custom, summaries → user text). */
export function toLlmMessages(messages: AgentMessage[]): Message[] {
  return convertToLlm(messages);
}
