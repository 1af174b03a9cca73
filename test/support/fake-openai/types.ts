/**
 * Shapes shared by the fake OpenAI servers (Responses and Chat Completions): the parts of the
 * request bodies they read, the turn they stream back, and what they record. Scripts are the
 * fake Anthropic server's (`MainStep` / `SideAnswer`): one scripted session runs on every API.
 */
import type { FakeContext, FakeRecord } from "../fake-core.ts";
import type { MainStep, SideAnswer } from "../fake-anthropic/types.ts";

export type JsonObject = Record<string, unknown>;

/** `POST /v1/responses` (fields the servers do not read stay in the index signature). */
export type ResponsesRequest = {
  model?: string;
  input: JsonObject[];
  tools?: JsonObject[];
  reasoning?: { effort?: string; summary?: string };
  include?: string[];
  store?: boolean;
  prompt_cache_key?: string;
  [key: string]: unknown;
};

/** A Chat Completions message as Pi sends it. */
export type ChatMessage = {
  role: string;
  content?: string | JsonObject[] | null;
  tool_calls?: Array<{ id: string; type: string; function?: { name: string; arguments: string } }>;
  tool_call_id?: string;
  reasoning_content?: string;
  [key: string]: unknown;
};

/** `POST /v1/chat/completions`. */
export type ChatRequest = {
  model?: string;
  messages: ChatMessage[];
  tools?: Array<{ type: string; function?: { name: string; [key: string]: unknown } }>;
  reasoning_effort?: string;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
};

/**
 * Token counts of one answer: prompt (cached and written parts included), cached, output,
 * reasoning; written to the cache, where the server reports writes (Codex on GPT-5.6+).
 */
export type OpenAiUsage = { promptTokens: number; cachedTokens: number; outputTokens: number; reasoningTokens: number; cacheWriteTokens?: number };

/** One turn a fake OpenAI server streamed back. */
export type EmittedTurn = {
  /** Responses: `resp_…`; Chat Completions: `chatcmpl-…`. */
  responseId: string;
  /** Responses: the reasoning item (its summary text and encrypted content); Chat Completions: `reasoning_content`. */
  reasoning?: { id: string; text: string; encryptedContent?: string };
  /** The assistant text (Responses: a `message` item with this id). */
  message?: { id: string; text: string };
  calls: Array<{ callId: string; itemId: string; name: string; arguments: string }>;
  /** Responses `status` / Chat Completions `finish_reason`. */
  finish: string;
  usage: OpenAiUsage;
};

export type ResponsesRecord = FakeRecord<ResponsesRequest, EmittedTurn>;
export type ChatRecord = FakeRecord<ChatRequest, EmittedTurn>;

export type OpenAiScript<R> = MainStep[] | ((ctx: FakeContext<R>) => MainStep | Promise<MainStep>);
export type OpenAiSideRouter<R> = (ctx: FakeContext<R>) => SideAnswer | Promise<SideAnswer>;

export type FakeOpenAiOptions<R> = {
  script?: OpenAiScript<R>;
  sideRouter?: OpenAiSideRouter<R>;
  classify?: (body: R extends FakeRecord<infer B, EmittedTurn> ? B : never) => "main" | "side";
  /** Fixed part of generated ids; random per server by default. */
  idNonce?: string;
  /** Secret of the encrypted reasoning content (Responses). */
  reasoningSecret?: string;
  /** The automatic prefix cache (see auto-cache.ts). */
  cache?: { minTokens?: number; stepTokens?: number; ttlMs?: number; reportWrites?: boolean };
  /** Set false to answer everything without the refusal checks (default true). */
  validate?: boolean;
};
