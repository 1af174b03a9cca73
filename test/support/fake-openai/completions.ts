/**
 * A fake OpenAI Chat Completions API (`POST /v1/chat/completions`, Pi's `openai-completions`,
 * what llama.cpp, vLLM and Ollama speak) on the shared fake server (../fake-core.ts). Requests
 * are checked by completions-validate.ts (a violation is a 400 with OpenAI's error body),
 * classified main/side (classify.ts), answered from the script or the side router as chunks
 * (completions-sse.ts), with `cached_tokens` from the automatic prefix cache (auto-cache.ts).
 * Reasoning is streamed as `reasoning_content` when the request sets a `reasoning_effort` other
 * than "none"; Pi sends it back on the assistant message under that field.
 */
import { idNonceOf, type Dialect, type FakeServer } from "../fake-core.ts";
import { chatInstructions, classifyChat } from "./classify.ts";
import { encodeChatChunks } from "./completions-sse.ts";
import { validateChatMessages } from "./completions-validate.ts";
import { createTurnFactory, startOpenAiFake } from "./emit.ts";
import type { ChatRecord, ChatRequest, EmittedTurn, FakeOpenAiOptions } from "./types.ts";

export type FakeCompletions = FakeServer<ChatRequest, EmittedTurn>;

function reasoningRequested(body: ChatRequest): boolean {
  return typeof body.reasoning_effort === "string" && body.reasoning_effort !== "none";
}

function completionsDialect(o: FakeOpenAiOptions<ChatRecord>): Omit<Dialect<ChatRequest, EmittedTurn>, "errorBody" | "streamHeaders"> {
  const turns = createTurnFactory(idNonceOf(o.idNonce), o.cache);
  return {
    api: "openai-completions",
    paths: ["/v1/chat/completions", "/chat/completions"],
    classify: classifyChat,
    isRequest: (p): p is ChatRequest => typeof p === "object" && p !== null && Array.isArray((p as { messages?: unknown }).messages),
    admit(body) {
      const v = o.validate === false ? undefined : validateChatMessages(body.messages);
      return v ? { refusal: { status: 400, type: "invalid_request_error", message: v.message, param: v.param, code: null } } : { effective: body };
    },
    emit(body, step) {
      const units = [...(body.tools ?? []), ...body.messages].map((u) => JSON.stringify(u));
      const turn = turns.emit({ model: String(body.model ?? ""), units, step, reasoning: reasoningRequested(body), responseId: (id) => `chatcmpl-${id}` });
      turn.finish = turn.calls.length > 0 ? "tool_calls" : "stop";
      return turn;
    },
    encode: (turn, body) => encodeChatChunks(turn, String(body.model ?? "fake-model"), Math.floor(Date.now() / 1000)),
  };
}

export function startFakeCompletions(options: FakeOpenAiOptions<ChatRecord> = {}): FakeCompletions {
  return startOpenAiFake(completionsDialect(options), options, chatInstructions);
}
