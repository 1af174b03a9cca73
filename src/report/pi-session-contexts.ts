/**
 * The one place the report reaches into Pi's runtime: Pi's own session loader rules
 * (`migrateSessionEntries` for old file versions, `buildSessionContext` for compactions,
 * branches, context edits, model changes, and `convertToLlm`) rebuild the context Pi sent
 * before each recorded assistant message: the branch up to the assistant entry's parent.
 *
 * A request whose ancestry is broken (an ancestor's line was unreadable, or parent links
 * loop) is not rebuilt: Pi would silently start the path at the break (or, for a missing
 * parent, at the file's last entry; or never return, for a loop). It is reported instead.
 */
import {
  buildSessionContext,
  buildSessionProjection,
  CURRENT_SESSION_VERSION,
  convertToLlm,
  estimateTokens,
  migrateSessionEntries,
  serializeConversation,
  sessionEntryToContextMessages,
  type FileEntry,
  type SessionEntry,
} from "@earendil-works/pi-coding-agent";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { getCurrentSystemMessage, type AssistantMessage, type Message } from "@earendil-works/pi-ai";
import type { PiReplayPrimitives } from "./pi-compaction.ts";
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
  /** Requests left out because their ancestry is broken, one finding per break. */
  diagnostics: RequestPointDiagnostic[];
}

export interface RequestPointDiagnostic {
  /** Source line of the first assistant entry affected (1-based). */
  line: number;
  message: string;
}

type AncestryBreak = { kind: "missing" | "loop"; id: string } | undefined;

/** Follows parent links from `id` to a root; names the first missing entry or a loop. */
function findAncestryBreak(id: string, byId: Map<string, SessionEntry>, known: Map<string, AncestryBreak>): AncestryBreak {
  const walked: string[] = [];
  const onWalk = new Set<string>();
  let current: string | null = id;
  let found: AncestryBreak;
  while (current !== null) {
    if (known.has(current)) {
      found = known.get(current);
      break;
    }
    if (onWalk.has(current)) {
      found = { kind: "loop", id: current };
      break;
    }
    const entry = byId.get(current);
    if (!entry) {
      found = { kind: "missing", id: current };
      break;
    }
    walked.push(current);
    onWalk.add(current);
    current = entry.parentId;
  }
  for (const w of walked) known.set(w, found);
  return found;
}

function ancestryMessage(brk: NonNullable<AncestryBreak>, requests: number): string {
  const one = requests === 1;
  const what =
    brk.kind === "missing"
      ? `${one ? "descends" : "descend"} from entry "${brk.id}", which is not in the file (unreadable line?)`
      : `${one ? "has" : "have"} parent links that loop through entry "${brk.id}"`;
  return `${requests} recorded request${one ? "" : "s"} ${what}; context cannot be rebuilt, skipped`;
}

export function recordedRequestPoints(parsed: ParsedSessionText): SessionRequestPoints {
  // Pi's migration mutates in place: an older file is migrated on copies, so the caller's parse stays untouched.
  const header = parsed.entries.find((e) => e.type === "session");
  const current = typeof header?.version === "number" && header.version >= CURRENT_SESSION_VERSION;
  const all = (current ? [...parsed.entries] : parsed.entries.map((e) => structuredClone(e))) as unknown as FileEntry[];
  if (!current) migrateSessionEntries(all);
  const lineById = new Map<string, number>();
  const entries: SessionEntry[] = [];
  all.forEach((e, i) => {
    if (e.type === "session") return;
    entries.push(e as SessionEntry);
    lineById.set((e as SessionEntry).id, parsed.lineOf[i]);
  });
  const byId = new Map(entries.map((e) => [e.id, e]));
  const points: RecordedRequestPoint[] = [];
  const known = new Map<string, AncestryBreak>();
  const breaks = new Map<string, { brk: NonNullable<AncestryBreak>; line: number; requests: number }>();
  let userMessages = 0;
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const role = (entry.message as { role?: string }).role;
    if (role === "user") userMessages++;
    if (role !== "assistant" || !entry.parentId) continue;
    const brk = findAncestryBreak(entry.parentId, byId, known);
    if (brk) {
      const key = `${brk.kind}:${brk.id}`;
      const seen = breaks.get(key) ?? { brk, line: lineById.get(entry.id) ?? 0, requests: 0 };
      seen.requests++;
      breaks.set(key, seen);
      continue;
    }
    const ctx = buildSessionContext(entries, entry.parentId, byId);
    points.push({
      entryId: entry.id,
      line: lineById.get(entry.id) ?? 0,
      assistant: entry.message as AssistantMessage,
      context: ctx.messages,
      thinkingLevel: ctx.thinkingLevel,
    });
  }
  const diagnostics = [...breaks.values()].map(({ brk, line, requests }) => ({ line, message: ancestryMessage(brk, requests) }));
  return { points, userMessages, entries, diagnostics };
}

/** Pi's conversion of context messages to LLM messages (custom, summaries → user text). */
export function toLlmMessages(messages: AgentMessage[]): Message[] {
  return convertToLlm(messages);
}

/**
 * Pi's own session and compaction functions, for the replay's simulation of Pi's threshold
 * compaction (`pi-compaction.ts`): the projection and context of a branch, Pi's token
 * estimate, its system message state, and the text a summary request carries.
 */
export const piReplayPrimitives: PiReplayPrimitives = {
  buildSessionProjection: (entries, leafId) => buildSessionProjection(entries, leafId),
  sessionEntryToContextMessages,
  estimateTokens,
  getCurrentSystemMessage: (messages) => getCurrentSystemMessage(messages as Parameters<typeof getCurrentSystemMessage>[0]) as AgentMessage | undefined,
  serializeConversation: (messages) => serializeConversation(convertToLlm(messages)),
};
