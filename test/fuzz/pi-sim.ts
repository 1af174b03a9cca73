/**
 * The Pi side of a fuzzed session: Pi's real in-memory `SessionManager` (tree, compactions,
 * branch summaries, context projection) and the messages a provider would have produced.
 * A restart serializes every entry to JSON and opens a new manager from them, as Pi reads a
 * session file back.
 */
import { SessionManager, type SessionEntry } from "@earendil-works/pi-coding-agent";
import type { AssistantMessage, ToolCall, ToolResultMessage, UserMessage } from "@earendil-works/pi-ai";
import type { ContextMessage } from "../../src/session/messages.ts";
import { signThinking } from "../support/fake-anthropic/signature.ts";
import type { Model } from "./engine-adapter.ts";
import type { OutputSize } from "./session-script.ts";

export const MODELS: readonly Model[] = [
  { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" },
  { provider: "anthropic", id: "claude-opus-4-6", api: "anthropic-messages" },
  { provider: "openai", id: "gpt-5.6", api: "openai-responses" },
  { provider: "google", id: "gemini-2.5-pro", api: "google-generative-ai" },
];

export const TOOLS = ["read", "bash", "edit", "grep", "keeper_recall"] as const;
export const PATHS = ["src/a.ts", "src/b.ts", "README.md", ".env", "deps/x.lock", "test/c.test.ts"] as const;

const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

const SIZE_CHARS: Record<OutputSize, number> = { empty: 0, tiny: 12, small: 300, medium: 2_500, large: 12_000, huge: 70_000 };

/** A deterministic output of about `size`, with multi-byte characters and NULs in the bigger ones. */
export function outputText(seed: string, size: OutputSize): string {
  const target = SIZE_CHARS[size];
  if (target === 0) return "";
  const lines: string[] = [];
  let n = 0;
  for (let i = 0; n < target; i++) {
    const extra = size === "huge" || size === "large" ? (i % 7 === 0 ? " é😀\u0000\uFFFD" : "") : "";
    const line = `${seed} line ${i}: const v${i} = ${(i * 7919) % 104729};${extra}`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join("\n").slice(0, target);
}

export function toolCallId(model: Model, n: number): string {
  if (model.provider === "openai") return `call_${n}|fc_${n}x`;
  if (model.provider === "google") return `fn_${n}`;
  return `toolu_${String(n).padStart(6, "0")}`;
}

function thinkingBlock(model: Model, text: string): AssistantMessage["content"][number] {
  if (model.api === "anthropic-messages") return { type: "thinking", thinking: text, thinkingSignature: signThinking(text) };
  if (model.provider === "openai") return { type: "thinking", thinking: text, thinkingSignature: JSON.stringify({ type: "reasoning", id: `rs_${text.length}`, summary: [] }) };
  return { type: "thinking", thinking: text, thinkingSignature: Buffer.from(text).toString("base64").slice(0, 24) };
}

export function assistantMessage(options: {
  model: Model;
  at: number;
  thinking?: string;
  text?: string;
  calls?: ToolCall[];
  stopReason?: AssistantMessage["stopReason"];
}): AssistantMessage {
  const content: AssistantMessage["content"] = [];
  if (options.thinking !== undefined) content.push(thinkingBlock(options.model, options.thinking));
  if (options.text !== undefined) content.push({ type: "text", text: options.text });
  for (const c of options.calls ?? []) content.push(c);
  return {
    role: "assistant",
    content,
    api: options.model.api,
    provider: options.model.provider,
    model: options.model.id,
    usage: { ...USAGE, cost: { ...USAGE.cost } },
    stopReason: options.stopReason ?? ((options.calls ?? []).length > 0 ? "toolUse" : "stop"),
    timestamp: options.at,
  } as AssistantMessage;
}

export function userMessage(text: string, at: number): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp: at };
}

export function toolResult(call: ToolCall, text: string, isError: boolean, at: number): ToolResultMessage {
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }], isError, timestamp: at } as ToolResultMessage;
}

/** Pi's session for one fuzzed run. */
export class PiSession {
  constructor(public manager: SessionManager = SessionManager.inMemory("/fuzz")) {}

  append(message: ContextMessage): string {
    return this.manager.appendMessage(message as Parameters<SessionManager["appendMessage"]>[0]);
  }

  /** The context Pi builds for the next request (compactions and branch summaries applied). */
  context(): ContextMessage[] {
    return this.manager.buildSessionProjection().messages as ContextMessage[];
  }

  /** Every entry from the root to the leaf. */
  branch(): SessionEntry[] {
    return this.manager.getBranch();
  }

  /** Raw messages of the branch (what `keeper_recall` searches). */
  branchMessages(): ContextMessage[] {
    const out: ContextMessage[] = [];
    for (const e of this.branch()) if (e.type === "message") out.push(e.message as ContextMessage);
    return out;
  }

  /** A restart: the entries as a file holds them, read back by a fresh manager. */
  reopened(): PiSession {
    const header = this.manager.getHeader();
    const file = JSON.parse(JSON.stringify([...(header ? [header] : []), ...this.manager.getEntries()]));
    return new PiSession(SessionManager.inMemory("/fuzz", undefined, file));
  }
}
