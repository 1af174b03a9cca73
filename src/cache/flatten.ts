/**
 * Flatten a request body into the block sequence Anthropic's prompt cache hashes over:
 * tools → system → messages, each message's content blocks in order.
 *
 * A block's `bytes` is its canonical serialization for prefix matching: the layer, role and
 * "starts a message" flag (so the same blocks split differently across messages differ),
 * then the block JSON without `cache_control` (moving a mark does not change the prefix).
 * String content is normalized to one text block: the provider renders both forms alike.
 * A Chat Completions message's fields beside its content are one more block (`messageBlocks`).
 */
import type { WireCacheControl, WireMessage, WireRequestBody } from "./wire-types.ts";

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


function flatBlock(
  layer: CacheLayer,
  role: FlatBlock["role"],
  messageIndex: number,
  blockIndex: number,
  block: Record<string, unknown>,
): FlatBlock {
  const mark = block.cache_control as WireCacheControl | undefined;
  const header = `${layer}|${role}|${blockIndex === 0 ? "start" : "cont"}|`;
  return {
    layer,
    messageIndex,
    blockIndex,
    role,
    type: layer === "tools" ? "tool" : String(block.type ?? "unknown"),
    block,
    bytes: header + JSON.stringify(withoutMark(block)),
    ...(mark ? { mark } : {}),
  };
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

export function flattenRequest(body: WireRequestBody): FlatBlock[] {
  const out: FlatBlock[] = [];
  (body.tools ?? []).forEach((tool, i) => out.push(flatBlock("tools", "tool", -1, i, tool as Record<string, unknown>)));
  if (typeof body.system === "string") {
    if (body.system.length > 0) out.push(flatBlock("system", "system", -1, 0, { type: "text", text: body.system }));
  } else {
    (body.system ?? []).forEach((b, i) => out.push(flatBlock("system", "system", -1, i, b as unknown as Record<string, unknown>)));
  }
  body.messages.forEach((message, mi) => {
    messageBlocks(message).forEach((b, bi) => out.push(flatBlock("messages", message.role, mi, bi, b as Record<string, unknown>)));
  });
  return out;
}
