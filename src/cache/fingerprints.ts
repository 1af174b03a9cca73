/**
 * Per-layer fingerprints of a request body, for attributing a cache bust to the layer that
 * changed: tools, system, or the messages prefix up to a given message index.
 * Uses the same canonical block bytes as the analyzer (marks do not affect a fingerprint).
 */
import { flattenRequest, type FlatBlock } from "./flatten.ts";
import { chainHash, EMPTY_PREFIX_HASH } from "./prefix-hash.ts";
import type { WireRequestBody } from "./wire-types.ts";

export interface LayerFingerprints {
  tools: string;
  system: string;
  /** messages[i] = hash of messages 0..i (inclusive), independent of tools and system. */
  messages: string[];
}

function hashBlocks(blocks: readonly FlatBlock[]): string {
  return blocks.reduce((h, b) => chainHash(h, b.bytes), EMPTY_PREFIX_HASH);
}

/** `blocks`: `flattenRequest(body)` when the caller already has it (marks do not change it). */
export function fingerprintRequest(body: WireRequestBody, blocks: readonly FlatBlock[] = flattenRequest(body)): LayerFingerprints {
  const messages: string[] = [];
  let h = EMPTY_PREFIX_HASH;
  let bi = 0;
  const messageBlocks = blocks.filter((b) => b.layer === "messages");
  for (let mi = 0; mi < body.messages.length; mi++) {
    // An empty message still changes the prefix: fold its index in.
    h = chainHash(h, `message:${mi}:${body.messages[mi].role}`);
    while (bi < messageBlocks.length && messageBlocks[bi].messageIndex === mi) h = chainHash(h, messageBlocks[bi++].bytes);
    messages.push(h);
  }
  return {
    tools: hashBlocks(blocks.filter((b) => b.layer === "tools")),
    system: hashBlocks(blocks.filter((b) => b.layer === "system")),
    messages,
  };
}

/** Hash of the messages prefix 0..messageIndex inclusive; EMPTY for -1. */
export function messagesPrefixFingerprint(fp: LayerFingerprints, messageIndex: number): string {
  return messageIndex < 0 ? EMPTY_PREFIX_HASH : fp.messages[Math.min(messageIndex, fp.messages.length - 1)] ?? EMPTY_PREFIX_HASH;
}

export type BustLayer = "tools" | "system" | "messages" | "none";

export interface LayerChange {
  layer: BustLayer;
  /** For "messages": the first message index whose prefix fingerprint differs. */
  messageIndex?: number;
}

/** The outermost layer that differs between two requests ("none" if `next` extends `prev`). */
export function firstChangedLayer(prev: LayerFingerprints, next: LayerFingerprints): LayerChange {
  if (prev.tools !== next.tools) return { layer: "tools" };
  if (prev.system !== next.system) return { layer: "system" };
  const n = Math.min(prev.messages.length, next.messages.length);
  for (let i = 0; i < n; i++) if (prev.messages[i] !== next.messages[i]) return { layer: "messages", messageIndex: i };
  if (next.messages.length < prev.messages.length) return { layer: "messages", messageIndex: n };
  return { layer: "none" };
}
