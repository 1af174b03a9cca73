/**
 * Flatten a request body into the block sequence Anthropic's prompt cache hashes over:
 * tools → system → messages, each message's content blocks in order.
 *
 * A block's `bytes` is its canonical serialization for prefix matching: the layer, role and
 * "starts a message" flag (so the same blocks split differently across messages differ),
 * then the block JSON without `cache_control` (moving a mark does not change the prefix).
 * String content is normalized to one text block: the provider renders both forms alike.
 * A Chat Completions message's fields beside its content are one more block (`messageBlocks`).
 * `cacheBodyOf` gives the body to flatten from any payload Pi serialized (a Responses or a
 * Google payload through a view).
 */
import type { WireCacheControl, WireMessage, WireRequestBody, WireTool } from "./wire-types.ts";

export type CacheLayer = "tools" | "system" | "messages";

export interface FlatBlock {
  layer: CacheLayer;
  /** Index into `body.messages`; -1 for tools and system blocks. */
  messageIndex: number;
  /** Index of the block inside its layer entry (tool index, system block index, content index). */
  blockIndex: number;
  role: "tool" | "system" | WireMessage["role"];
  /** Block type: "tool", "text", "tool_use", "tool_result", "thinking", ... */
  type: string;
  /** The block as sent, cache_control included. */
  block: Record<string, unknown>;
  /** Canonical bytes used for prefix hashing. */
  bytes: string;
  mark?: WireCacheControl;
}

function withoutMark(block: Record<string, unknown>): Record<string, unknown> {
  if (!("cache_control" in block)) return block;
  const { cache_control: _ignored, ...rest } = block;
  return rest;
}


/**
 * Canonical bytes by block object, for callers whose block objects are never changed once
 * built (the replay's serializer shares them between requests): each block is serialized once.
 */
export type FlatBytesMemo = WeakMap<object, { header: string; bytes: string; flat: FlatBlock }>;

function flatBlock(
  layer: CacheLayer,
  role: FlatBlock["role"],
  messageIndex: number,
  blockIndex: number,
  block: Record<string, unknown>,
  memo: FlatBytesMemo | undefined,
): FlatBlock {
  const mark = block.cache_control as WireCacheControl | undefined;
  const header = `${layer}|${role}|${blockIndex === 0 ? "start" : "cont"}|`;
  // The very same string for the same block and header (maps keyed by it then hash it once), the
  // very same flat block at the same place.
  const known = memo?.get(block);
  if (known && known.header === header && known.flat.messageIndex === messageIndex && known.flat.blockIndex === blockIndex && known.flat.mark === mark) return known.flat;
  const bytes = known && known.header === header ? known.bytes : header + JSON.stringify(withoutMark(block));
  const flat: FlatBlock = {
    layer,
    messageIndex,
    blockIndex,
    role,
    type: layer === "tools" ? "tool" : String(block.type ?? "unknown"),
    block,
    bytes,
    ...(mark ? { mark } : {}),
  };
  memo?.set(block, { header, bytes, flat });
  return flat;
}

/**
 * A message's blocks as the cache hashes them: string content is one text block. A Chat
 * Completions message (`openai-completions`, the body Pi sends there also has `messages`) may
 * have `content: null` (an assistant turn with calls only) and carries its calls, its answer's
 * call id and its reasoning in fields beside the content: those fields are one more block
 * (`message_fields`), so they take part in the prefix bytes as they do on the wire.
 */
export function messageBlocks(message: WireMessage): unknown[] {
  const { role: _role, content, ...fields } = message as WireMessage & Record<string, unknown>;
  const blocks: unknown[] = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
  return Object.keys(fields).length > 0 ? [...blocks, { type: "message_fields", ...fields }] : blocks;
}

/** `memo`: only for bodies whose block objects are never mutated after this call (see `FlatBytesMemo`). */
export function flattenRequest(body: WireRequestBody, memo?: FlatBytesMemo): FlatBlock[] {
  const out: FlatBlock[] = [];
  (body.tools ?? []).forEach((tool, i) => out.push(flatBlock("tools", "tool", -1, i, tool as Record<string, unknown>, memo)));
  if (typeof body.system === "string") {
    if (body.system.length > 0) out.push(flatBlock("system", "system", -1, 0, { type: "text", text: body.system }, undefined));
  } else {
    (body.system ?? []).forEach((b, i) => out.push(flatBlock("system", "system", -1, i, b as unknown as Record<string, unknown>, memo)));
  }
  body.messages.forEach((message, mi) => {
    // Only the message's own content blocks come first and are its objects; blocks made by
    // messageBlocks (string content, the message's fields) are new each call: no memo for them.
    const own = Array.isArray(message.content) ? message.content.length : 0;
    messageBlocks(message).forEach((b, bi) => out.push(flatBlock("messages", message.role, mi, bi, b as Record<string, unknown>, bi < own ? memo : undefined)));
  });
  return out;
}

/*
 * The request body the cache analysis reads, from the payload Pi serialized for a provider
 * (`before_provider_request`):
 *
 * - A payload with `messages` (Anthropic Messages, OpenAI Chat Completions — whose messages
 *   `messageBlocks` reads with their fields beside the content) is read as it is.
 * - An OpenAI Responses payload (`openai-responses`, Codex, Azure: `input` items, no `messages`)
 *   is read through a view: its leading `developer` / `system` items are the system prompt and
 *   the tools of its leading `additional_tools` items (where Codex declares every tool, ahead of
 *   the prompt) are tools beside the top-level ones; the other items are grouped into user and
 *   assistant messages (a later `additional_tools` item, a tool added mid-conversation, stays in
 *   place as a block) — a `reasoning` item as a thinking
 *   block, a `function_call` as a tool use, a `function_call_output` as a tool result (the call's
 *   `call_id` as the id) — and each block keeps its whole item, so every byte of it takes part
 *   in the prefix hashes. The view is never sent.
 * - A Google payload (`google-generative-ai`, `google-vertex`: pi-ai's `{ model, contents, config }`
 *   before @google/genai builds the request) is read through a view too: the system instruction
 *   is the system prompt, the function declarations are the tools, each content is one message
 *   (`model` → assistant) whose parts are its blocks — a thought as a thinking block (its
 *   signature as the signature), a function call as a tool use, a function response as a tool
 *   result — each block keeping its whole part. A call and its response are paired by their id,
 *   or, without ids (Gemini 2.5), by their place: the k-th response answers the k-th call of the
 *   content before it, as Google pairs them.
 * - Anything else: undefined (not a body this analysis understands).
 */
type Item = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Item[]).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** The block one input item stands for, and the role of the message it belongs to. */
function blockOf(item: Item): { role: "user" | "assistant"; block: Record<string, unknown> } {
  switch (item.type) {
    case "reasoning":
      return { role: "assistant", block: { type: "thinking", thinking: textOf(item.summary), signature: String(item.encrypted_content ?? ""), item } };
    case "function_call":
    case "custom_tool_call":
      return { role: "assistant", block: { type: "tool_use", id: String(item.call_id), name: String(item.name), input: parseArguments(item.arguments ?? item.input), item } };
    case "function_call_output":
    case "custom_tool_call_output":
      return { role: "user", block: { type: "tool_result", tool_use_id: String(item.call_id), content: typeof item.output === "string" ? item.output : textOf(item.output), item } };
    default:
      return { role: item.role === "assistant" ? "assistant" : "user", block: { type: "text", text: textOf(item.content), item } };
  }
}

const isInstruction = (item: Item) => item.type === undefined || item.type === "message" ? item.role === "developer" || item.role === "system" : false;

/** A Responses payload read as a messages body (see the module comment). */
export function responsesView(payload: { input: unknown[]; tools?: unknown[] }): WireRequestBody {
  const input = payload.input.filter((i): i is Item => typeof i === "object" && i !== null);
  let start = 0;
  while (start < input.length && (isInstruction(input[start]!) || input[start]!.type === "additional_tools")) start++;
  const head = input.slice(0, start);
  const anchored = head.flatMap((item) => (item.type === "additional_tools" && Array.isArray(item.tools) ? (item.tools as unknown[]) : []));
  const tools = [...(payload.tools ?? []), ...anchored];
  const system = head.filter((item) => item.type !== "additional_tools").map((item) => ({ type: "text" as const, text: textOf(item.content), item }));
  const messages: WireMessage[] = [];
  for (const item of input.slice(start)) {
    const { role, block } = blockOf(item);
    const last = messages[messages.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) (last.content as unknown[]).push(block);
    else messages.push({ role, content: [block] } as WireMessage);
  }
  return { ...(payload.tools || tools.length > 0 ? { tools: tools as WireTool[] } : {}), ...(system.length > 0 ? { system } : {}), messages } as WireRequestBody;
}

type GooglePayload = { contents: unknown[]; config?: { systemInstruction?: unknown; tools?: unknown } };

/** The id a Google call or response is paired by: its own, else its place (content index of the call, then k). */
const googleCallId = (own: unknown, callContent: number, k: number) => (typeof own === "string" && own ? own : `${callContent}#${k}`);

function googleBlock(part: Item, contentIndex: number, k: { call: number; response: number }): Record<string, unknown> {
  const call = part.functionCall as Item | undefined;
  if (call) return { type: "tool_use", id: googleCallId(call.id, contentIndex, k.call++), name: String(call.name), input: call.args ?? {}, part };
  const response = part.functionResponse as Item | undefined;
  if (response) {
    const r = response.response as Item | undefined;
    const content = typeof r?.output === "string" ? r.output : typeof r?.error === "string" ? r.error : JSON.stringify(r ?? {});
    return { type: "tool_result", tool_use_id: googleCallId(response.id, contentIndex - 1, k.response++), content, part };
  }
  if (part.thought === true) return { type: "thinking", thinking: String(part.text ?? ""), signature: String(part.thoughtSignature ?? ""), part };
  if (typeof part.text === "string") return { type: "text", text: part.text, part };
  return { type: "google_part", part };
}

/** A Google payload read as a messages body (see the module comment). */
export function googleView(payload: GooglePayload): WireRequestBody {
  const config = payload.config ?? {};
  const instruction = config.systemInstruction;
  const systemText = typeof instruction === "string" ? instruction : textOf((instruction as Item | undefined)?.parts);
  const declarations = Array.isArray(config.tools) ? (config.tools as Item[]).flatMap((t) => (Array.isArray(t.functionDeclarations) ? (t.functionDeclarations as Item[]) : [])) : [];
  const messages = payload.contents
    .filter((c): c is Item => typeof c === "object" && c !== null)
    .map((c, ci) => {
      const k = { call: 0, response: 0 };
      const parts = Array.isArray(c.parts) ? (c.parts as unknown[]).filter((p): p is Item => typeof p === "object" && p !== null) : [];
      return { role: c.role === "model" ? "assistant" : "user", content: parts.map((p) => googleBlock(p, ci, k)) } as WireMessage;
    });
  return {
    ...(declarations.length > 0 ? { tools: declarations as WireTool[] } : {}),
    ...(systemText ? { system: [{ type: "text" as const, text: systemText }] } : {}),
    messages,
  } as WireRequestBody;
}

/** What the cache analysis reads for `payload` (the payload itself, a view of it, or undefined). */
export function cacheBodyOf(payload: unknown): WireRequestBody | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const p = payload as { messages?: unknown; input?: unknown; contents?: unknown; tools?: unknown };
  if (Array.isArray(p.messages)) return payload as WireRequestBody;
  if (Array.isArray(p.input)) return responsesView(p as { input: unknown[]; tools?: unknown[] });
  if (Array.isArray(p.contents)) return googleView(p as GooglePayload);
  return undefined;
}
