/** Builders for hand-written Anthropic wire requests used by the fake-server unit tests. */
import type { WireBlock, WireMessage, WireRequest, WireTool } from "../support/fake-anthropic/index.ts";
import { signThinking } from "../support/fake-anthropic/index.ts";

export const PI_TOOLS: WireTool[] = ["read", "bash", "edit", "write"].map((name) => ({
  name,
  description: `${name} tool`,
  input_schema: { type: "object", properties: {} },
}));

export const SYSTEM = [{ type: "text", text: "You are a coding assistant running inside pi, a coding agent harness." }];

export function userText(text: string, extra: Partial<WireBlock> = {}): WireMessage {
  return { role: "user", content: [{ type: "text", text, ...extra }] };
}

export function toolUse(id: string, name = "bash", input: Record<string, unknown> = { command: "ls" }): WireBlock {
  return { type: "tool_use", id, name, input };
}

export function toolResult(id: string, content = "ok", extra: Partial<WireBlock> = {}): WireBlock {
  return { type: "tool_result", tool_use_id: id, content, ...extra };
}

export function thinkingBlock(text: string, signature = signThinking(text)): WireBlock {
  return { type: "thinking", thinking: text, signature };
}

export function assistantMsg(...content: WireBlock[]): WireMessage {
  return { role: "assistant", content };
}

export function userMsg(...content: WireBlock[]): WireMessage {
  return { role: "user", content };
}

export function request(messages: WireMessage[], extra: Partial<WireRequest> = {}): WireRequest {
  return {
    model: "claude-fake-1",
    max_tokens: 1024,
    stream: true,
    system: SYSTEM,
    tools: PI_TOOLS,
    thinking: { type: "enabled", budget_tokens: 1024 },
    messages,
    ...extra,
  };
}

export async function post(baseUrl: string, body: WireRequest | string, query = "?beta=true"): Promise<Response> {
  return fetch(`${baseUrl}/v1/messages${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
