/**
 * pi-ai's own provider clients, in process, against the fake servers: what Pi serializes and how
 * it parses the stream, without the CLI. A context is a transcript (`normalizeContext`: the
 * system prompt and tools as its leading system message), as Pi passes it to a provider.
 */
import { normalizeContext, type AssistantMessage, type Message } from "@earendil-works/pi-ai";

type Transcript = ReturnType<typeof normalizeContext>;
import { stream as anthropicStream } from "@earendil-works/pi-ai/api/anthropic-messages";
import { stream as googleStream } from "@earendil-works/pi-ai/api/google-generative-ai";
import { stream as codexStream } from "@earendil-works/pi-ai/api/openai-codex-responses";
import { stream as completionsStream } from "@earendil-works/pi-ai/api/openai-completions";
import { stream as responsesStream } from "@earendil-works/pi-ai/api/openai-responses";

export type ClientApi = "anthropic-messages" | "openai-responses" | "openai-completions" | "google-generative-ai" | "openai-codex-responses";

const MODEL_IDS: Record<ClientApi, string> = {
  "anthropic-messages": "claude-sonnet-4-5",
  "openai-responses": "gpt-5.2",
  "openai-completions": "gpt-5.2",
  "google-generative-ai": "gemini-3-flash-preview",
  "openai-codex-responses": "gpt-5.6-terra",
};
const BASE_PATHS: Record<ClientApi, string> = { "anthropic-messages": "", "openai-responses": "/v1", "openai-completions": "/v1", "google-generative-ai": "/v1beta", "openai-codex-responses": "" };

export const PI_TOOLS = ["read", "bash"].map((name) => ({ name, description: `${name} tool`, parameters: { type: "object" as const, properties: {} } }));

export function piModel(api: ClientApi, baseUrl: string, compat?: Record<string, unknown>, id = MODEL_IDS[api]) {
  return {
    id,
    name: "fake",
    api,
    provider: "fake",
    baseUrl: `${baseUrl}${BASE_PATHS[api]}`,
    reasoning: true,
    input: ["text" as const],
    cost: { input: 1, output: 1, cacheRead: 0.1, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 4_096,
    ...(compat ? { compat } : {}),
  };
}

export function transcript(messages: Message[], systemPrompt = "You are pi."): Transcript {
  return normalizeContext({ systemPrompt, messages, tools: PI_TOOLS });
}

export const user = (text: string, timestamp = 1): Message => ({ role: "user", content: text, timestamp });

export function toolResultFor(call: { id: string; name: string }, text = "ok"): Message {
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }], isError: false, timestamp: 2 };
}

/** One request through pi-ai's client for `api`; resolves with the assistant message (errors included). */
export async function turn(
  api: ClientApi,
  baseUrl: string,
  context: Transcript,
  o: { sessionId?: string; compat?: Record<string, unknown>; modelId?: string; apiKey?: string; transport?: "sse" | "websocket" | "auto" } = {},
): Promise<AssistantMessage> {
  const model = piModel(api, baseUrl, o.compat, o.modelId) as never;
  const common = { apiKey: o.apiKey ?? "fake-key", sessionId: o.sessionId ?? "session-1", maxRetries: 0 };
  const s =
    api === "openai-codex-responses"
      ? codexStream(model, context, { ...common, reasoningEffort: "medium", transport: o.transport ?? "auto" } as never)
      : api === "openai-responses"
      ? responsesStream(model, context, { ...common, reasoningEffort: "medium" } as never)
      : api === "openai-completions"
        ? completionsStream(model, context, { ...common, reasoningEffort: "medium" } as never)
        : api === "google-generative-ai"
          ? googleStream(model, context, { ...common, thinking: /gemini-[3-9]/.test(o.modelId ?? MODEL_IDS[api]) ? { enabled: true, level: "MEDIUM" } : { enabled: true, budgetTokens: 1024 } } as never)
          : anthropicStream(model, context, { ...common, thinkingEnabled: true, thinkingBudgetTokens: 1024 } as never);
  return s.result();
}

/** The tool calls of an assistant message. */
export function callsOf(m: AssistantMessage): Array<{ id: string; name: string }> {
  return m.content.flatMap((b) => (b.type === "toolCall" ? [{ id: b.id, name: b.name }] : []));
}
