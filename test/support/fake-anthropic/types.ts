import type { FakeRecord } from "../fake-core.ts";
import type { ThreadUse } from "./threads.ts";

/**
 * Shapes shared by the fake Anthropic Messages server: the wire request (only the parts the
 * server reads), the scripted answers, and what the server records per request.
 */

/** One content block of a request message, as Anthropic's wire format spells it. */
export type WireBlock = {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
  cache_control?: { type: string; ttl?: string };
  [key: string]: unknown;
};

export type WireMessage = { role: string; content: string | WireBlock[]; [key: string]: unknown };

export type WireTool = { name: string; cache_control?: { type: string; ttl?: string }; [key: string]: unknown };

/** The body of `POST /v1/messages` (fields the server does not read stay in the index signature). */
export type WireRequest = {
  model?: string;
  max_tokens?: number;
  stream?: boolean;
  system?: string | WireBlock[];
  tools?: WireTool[];
  messages: WireMessage[];
  thinking?: { type: string; budget_tokens?: number; [key: string]: unknown };
  [key: string]: unknown;
};

/** Anthropic's usage block, as sent in `message_start` / `message_delta`. */
export type WireUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
};

/** An error the server answers instead of a stream (HTTP status + Anthropic error type). */
export type ScriptedError = {
  status: number;
  type: string;
  message: string;
  /** Provider-specific extra fields of the error (Anthropic: `details.error_code` of thread refusals). */
  details?: Record<string, unknown>;
};

export type ScriptedToolCall = {
  name: string;
  input: Record<string, unknown>;
  /** Tool-use id; the server issues a unique `toolu_…` id when absent. */
  id?: string;
};

/**
 * One scripted assistant turn of the main loop. Blocks are emitted in the order
 * thinking → text → tool_use… . Stop reason is `tool_use` when there are tool calls,
 * else `end_turn`, unless `stopReason` overrides it.
 */
export type MainStep = {
  thinking?: string;
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Wait this long after the request arrives before answering. */
  delayMs?: number;
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence";
  /** Answer with this HTTP error instead of a stream. */
  error?: ScriptedError;
  /** Replace (field by field) the usage the server would compute. */
  usage?: Partial<WireUsage>;
};

/** A scripted answer to a side request (compaction summary, this project's summarizer, …). */
export type SideAnswer = {
  text: string;
  thinking?: string;
  delayMs?: number;
  error?: ScriptedError;
  usage?: Partial<WireUsage>;
};

export type RequestKind = "main" | "side";

/** Decides whether a parsed request belongs to the main agent loop. */
export type RequestClassifier = (body: WireRequest) => RequestKind;

/** What the server streamed back for one request. */
export type EmittedResponse = {
  messageId: string;
  /** Thinking blocks the request carried that were dropped (block binding, binding.ts), sent in `message_start`. */
  inputTransformations?: Array<{ type: string; path: string; reason: string }>;
  thinking?: { text: string; signature: string };
  text?: string;
  toolCalls: Array<{ id: string; name: string; input: Record<string, unknown> }>;
  stopReason: string;
  usage: WireUsage;
};

/**
 * One request as the server saw it (see `FakeRecord` in ../fake-core.ts: arrival, raw text, the
 * body as sent and the full request it stands for, status, what was streamed back), plus what it
 * did with message threads.
 */
export type RecordedRequest = FakeRecord<WireRequest, EmittedResponse> & { thread?: ThreadUse };

/** Context handed to script functions and side routers. */
export type ScriptContext = { request: RecordedRequest; kindIndex: number };

/** Main-loop script: a list consumed one step per main request, or a function. */
export type MainScript = MainStep[] | ((ctx: ScriptContext) => MainStep | Promise<MainStep>);

/** Side-request router: any scripted answer, possibly delayed. */
export type SideRouter = (ctx: ScriptContext) => SideAnswer | Promise<SideAnswer>;
