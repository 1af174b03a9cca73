/**
 * Flatten a request body into the block sequence Anthropic's prompt cache hashes over:
 * tools → system → messages, each message's content blocks in order.
 *
 * A block's `bytes` is its canonical serialization for prefix matching: the layer, role and
 * "starts a message" flag (so the same blocks split differently across messages differ),
 * then the block JSON without `cache_control` (moving a mark does not change the prefix).
 * String content is normalized to one text block: the provider renders both forms alike.
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
    if (typeof message.content === "string") out.push(flatBlock("messages", message.role, mi, 0, { type: "text", text: message.content }, undefined));
    else message.content.forEach((b, bi) => out.push(flatBlock("messages", message.role, mi, bi, b as Record<string, unknown>, memo)));
  });
  return out;
}
