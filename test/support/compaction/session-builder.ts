/** Builds Pi sessions in memory for compaction tests, one operation at a time. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { type FileEntry, parseSessionEntries, SessionManager } from "@earendil-works/pi-coding-agent";
import { assistant, call, result, text, thinking, user } from "../message-factory.ts";

export const CORPUS_PATH = join(import.meta.dir, "../../../corpus/large-session.jsonl");

export function loadCorpus(): FileEntry[] {
  return parseSessionEntries(readFileSync(CORPUS_PATH, "utf8"));
}

/** The corpus as an in-memory session (the file is never written). */
export function corpusSession(limit?: number): SessionManager {
  const entries = loadCorpus();
  return SessionManager.inMemory("/tmp", undefined, limit === undefined ? entries : entries.slice(0, limit + 1));
}

export type BuildOp =
  | { op: "user"; chars: number }
  | { op: "tool_loop"; tool: "read" | "write" | "edit" | "bash"; path: string; resultChars: number; usage?: number }
  | { op: "reply"; chars: number; usage?: number; withThinking?: boolean }
  | { op: "bash_execution"; chars: number }
  | { op: "custom_entry" }
  | { op: "custom_message"; chars: number }
  | { op: "thinking_change"; level: string }
  | { op: "compaction"; fromHook: boolean; keepLast: number; files?: { read: string[]; modified: string[] } }
  | { op: "omit_last_assistant" }
  | { op: "replace_last_tool_result"; chars: number }
  | { op: "aborted_reply" };

function filler(n: number, seed: string): string {
  return (seed + " lorem ipsum dolor sit amet ").repeat(Math.ceil(n / (seed.length + 28))).slice(0, n);
}

function withUsage(message: AssistantMessage, tokens: number | undefined): AssistantMessage {
  if (!tokens) return message;
  return { ...message, usage: { ...message.usage, input: tokens - 100, output: 100, totalTokens: tokens } };
}

export class SessionBuilder {
  readonly sm = SessionManager.inMemory("/tmp");
  private t = 1_700_000_000_000;
  private n = 0;
  private lastAssistantId: string | undefined;
  private lastToolResultId: string | undefined;

  private ts(): number {
    return (this.t += 1000);
  }

  apply(op: BuildOp): this {
    const sm = this.sm;
    switch (op.op) {
      case "user":
        sm.appendMessage(user(filler(op.chars, `u${this.n++}`), this.ts()));
        break;
      case "tool_loop": {
        const id = `call_${this.n++}`;
        const args = op.tool === "bash" ? { command: `ls ${op.path}` } : { path: op.path, content: "x" };
        this.lastAssistantId = sm.appendMessage(withUsage(assistant([call(id, op.tool, args)], this.ts()), op.usage));
        this.lastToolResultId = sm.appendMessage(result(id, op.tool, filler(op.resultChars, op.path), this.ts()));
        break;
      }
      case "reply": {
        const blocks: AssistantMessage["content"] = op.withThinking ? [thinking(filler(200, "th")), text(filler(op.chars, "r"))] : [text(filler(op.chars, "r"))];
        this.lastAssistantId = sm.appendMessage(withUsage(assistant(blocks, this.ts()), op.usage));
        break;
      }
      case "aborted_reply":
        this.lastAssistantId = sm.appendMessage(assistant([text("partial")], this.ts(), { stopReason: "aborted" }));
        break;
      case "bash_execution":
        sm.appendMessage({
          role: "bashExecution",
          command: "echo hi",
          output: filler(op.chars, "out"),
          exitCode: 0,
          cancelled: false,
          truncated: false,
          timestamp: this.ts(),
        } as never);
        break;
      case "custom_entry":
        sm.appendCustomEntry("test-state", { n: this.n++ });
        break;
      case "custom_message":
        sm.appendCustomMessageEntry("test-note", filler(op.chars, "note"), true);
        break;
      case "thinking_change":
        sm.appendThinkingLevelChange(op.level);
        break;
      case "compaction": {
        const branch = sm.getBranch().filter((e) => e.type === "message" && (e.message as { role: string }).role !== "toolResult");
        const kept = branch[Math.max(0, branch.length - op.keepLast)];
        if (!kept || sm.getLeafEntry()?.type === "compaction") break;
        const details = op.files ? { readFiles: op.files.read, modifiedFiles: op.files.modified } : undefined;
        sm.appendCompaction(`summary ${this.n++}`, kept.id, 1234, details, op.fromHook);
        break;
      }
      case "omit_last_assistant":
        if (this.lastAssistantId) sm.appendContextEdit(this.lastAssistantId, null);
        break;
      case "replace_last_tool_result":
        if (this.lastToolResultId) sm.appendContextEdit(this.lastToolResultId, { content: [text(filler(op.chars, "edited"))] });
        break;
    }
    return this;
  }

  applyAll(ops: BuildOp[]): this {
    for (const op of ops) this.apply(op);
    return this;
  }
}
