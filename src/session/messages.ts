/**
 * Typed helpers over the messages Pi hands to the render (`context_with_system`: its system
 * messages included).
 *
 * Only type imports from Pi's packages: this module (and everything in the pure core)
 * never loads Pi's runtime.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
  AssistantMessage,
  ImageContent,
  TextContent,
  ThinkingContent,
  ToolCall,
  ToolResultMessage,
  UserMessage,
} from "@earendil-works/pi-ai";

export type { AgentMessage, AssistantMessage, ToolResultMessage, UserMessage, ToolCall, ThinkingContent, TextContent, ImageContent };

/** A message as the render pipeline sees it: anything Pi may put in the context. */
export type ContextMessage = AgentMessage;

export function isAssistant(m: ContextMessage): m is AssistantMessage {
  return (m as { role?: string }).role === "assistant";
}

export function isToolResult(m: ContextMessage): m is ToolResultMessage {
  return (m as { role?: string }).role === "toolResult";
}

export function isUser(m: ContextMessage): m is UserMessage {
  return (m as { role?: string }).role === "user";
}

/** Pi's prompt and tool declarations in the transcript (the leading one, and the patches appended mid-conversation). */
export function isSystemMessage(m: ContextMessage): boolean {
  return (m as { role?: string }).role === "system";
}

/**
 * A message's timestamp as a position in history, for walks that stop at the first message past a
 * persisted timestamp: none for Pi's system messages (the leading one is stamped when the first
 * request is built, a millisecond or so after the first prompt; they follow their predecessor).
 */
export function positionTimestampOf(m: ContextMessage): number | undefined {
  return isSystemMessage(m) ? undefined : timestampOf(m);
}

export function toolCallsOf(m: ContextMessage): ToolCall[] {
  if (!isAssistant(m)) return [];
  return m.content.filter((b): b is ToolCall => b.type === "toolCall");
}

export function hasThinking(m: ContextMessage): boolean {
  return isAssistant(m) && m.content.some((b) => b.type === "thinking");
}

/** Concatenated text of a tool result (images are counted by the estimator, not here). */
export function toolResultText(m: ToolResultMessage): string {
  let out = "";
  for (const block of m.content) if (block.type === "text") out += (out ? "\n" : "") + block.text;
  return out;
}

/** The image blocks of a tool result (a `read` of a picture, on a model that takes images). */
export function toolResultImages(m: ToolResultMessage): ImageContent[] {
  return m.content.filter((b): b is ImageContent => b.type === "image");
}

/** Decoded size of base64 data. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** Timestamp of a message, or undefined when Pi's message shape carries none. */
export function timestampOf(m: ContextMessage): number | undefined {
  const t = (m as { timestamp?: unknown }).timestamp;
  return typeof t === "number" ? t : undefined;
}
