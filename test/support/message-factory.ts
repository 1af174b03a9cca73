/** Small builders for test messages with every field Pi's types require. */
import type { AssistantMessage, ThinkingContent, ToolCall, ToolResultMessage, UserMessage, TextContent } from "@earendil-works/pi-ai";

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

export function user(text: string, timestamp: number): UserMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

export function thinking(text: string, signature = `sig-${text.length}`): ThinkingContent {
  return { type: "thinking", thinking: text, thinkingSignature: signature };
}

export function text(t: string): TextContent {
  return { type: "text", text: t };
}

export function call(id: string, name: string, args: Record<string, unknown> = {}): ToolCall {
  return { type: "toolCall", id, name, arguments: args as ToolCall["arguments"] };
}

export function assistant(
  content: AssistantMessage["content"],
  timestamp: number,
  opts: { stopReason?: AssistantMessage["stopReason"]; model?: string; provider?: string } = {},
): AssistantMessage {
  const hasCalls = content.some((b) => b.type === "toolCall");
  return {
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: (opts.provider ?? "anthropic") as AssistantMessage["provider"],
    model: opts.model ?? "claude-sonnet-4-5",
    usage: { ...ZERO_USAGE, cost: { ...ZERO_USAGE.cost } },
    stopReason: opts.stopReason ?? (hasCalls ? "toolUse" : "stop"),
    timestamp,
  } as AssistantMessage;
}

export function result(
  toolCallId: string,
  toolName: string,
  body: string,
  timestamp: number,
  isError = false,
): ToolResultMessage {
  return { role: "toolResult", toolCallId, toolName, content: [{ type: "text", text: body }], isError, timestamp } as ToolResultMessage;
}

/** A tool result with Pi's note beside one image (a `read` of a picture): `data` is base64. */
export function imageResult(toolCallId: string, toolName: string, mimeType: string, data: string, timestamp: number): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId,
    toolName,
    content: [
      { type: "text", text: `Read image file [${mimeType}]` },
      { type: "image", data, mimeType },
    ],
    isError: false,
    timestamp,
  } as ToolResultMessage;
}
