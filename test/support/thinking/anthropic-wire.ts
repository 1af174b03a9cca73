/**
 * Runs messages through pi-ai's real Anthropic serializer and returns the request body it
 * would send. `onPayload` captures the body and aborts before any network access.
 */
import { stream } from "@earendil-works/pi-ai/api/anthropic-messages";
import { normalizeContext, type Message, type Model, type Tool } from "@earendil-works/pi-ai";
import type { ContextMessage } from "../../../src/session/messages.ts";

export const CLAUDE_TEST_MODEL = {
  id: "claude-sonnet-4-5",
  name: "Claude Sonnet 4.5 (test)",
  api: "anthropic-messages",
  provider: "anthropic",
  baseUrl: "http://127.0.0.1:9",
  reasoning: true,
  input: ["text"],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200_000,
  maxTokens: 8_000,
} as unknown as Model<"anthropic-messages">;

const READ_TOOL = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
} as unknown as Tool;

export interface WireBlock {
  type: string;
  cache_control?: unknown;
  [key: string]: unknown;
}
export interface WireMessage {
  role: string;
  content: WireBlock[] | string;
}
export interface WirePayload {
  system?: WireBlock[];
  tools?: WireBlock[];
  messages: WireMessage[];
}

export async function anthropicPayload(messages: readonly ContextMessage[]): Promise<WirePayload> {
  let captured: WirePayload | undefined;
  const events = stream(
    CLAUDE_TEST_MODEL,
    normalizeContext({ systemPrompt: "You are a test.", tools: [READ_TOOL], messages: messages as unknown as Message[] }),
    {
      apiKey: "test-key",
      onPayload: (payload) => {
        captured = structuredClone(payload) as WirePayload;
        throw new Error("payload captured");
      },
    },
  );
  await events.result();
  if (captured === undefined) throw new Error("the serializer never produced a payload");
  return captured;
}
