/** Hand-made Anthropic request bodies for the cache analyzer tests. */
import type { FlatBlock } from "../../../src/cache/flatten.ts";
import type { TokenEstimator } from "../../../src/cache/token-estimator.ts";
import type { WireCacheControl, WireContentBlock, WireMessage, WireRequestBody } from "../../../src/cache/wire-types.ts";

/**
 * Test estimator with round numbers: a tool definition is 1000 tokens, a text block or a
 * tool_result is chars/4, a tool_use is 10 tokens.
 */
export const testEstimator: TokenEstimator = (b: FlatBlock) => {
  if (b.type === "tool") return 1000;
  if (b.type === "tool_use") return 10;
  if (b.type === "text") return Math.ceil(String(b.block.text).length / 4);
  if (b.type === "tool_result") return Math.ceil(String(b.block.content).length / 4);
  return 0;
};

/** A text of exactly `tokens` tokens under `testEstimator`, made unique by `tag`. */
export function textOf(tokens: number, tag: string): string {
  const base = `${tag}:`;
  return (base + "x".repeat(Math.max(0, tokens * 4 - base.length))).slice(0, tokens * 4);
}

export const MARK: WireCacheControl = { type: "ephemeral" };
export const MARK_1H: WireCacheControl = { type: "ephemeral", ttl: "1h" };

export function txt(tokens: number, tag: string): WireContentBlock {
  return { type: "text", text: textOf(tokens, tag) };
}
export function use(id: string): WireContentBlock {
  return { type: "tool_use", id, name: "read", input: { path: id } };
}
export function res(id: string, tokens: number): WireContentBlock {
  return { type: "tool_result", tool_use_id: id, content: textOf(tokens, id) };
}

/**
 * Pi-shaped body: one tool (1000 tokens, marked), a 500-token system block (marked), the
 * messages with the last block of the last message marked (pi-ai's placement).
 */
export function piBody(messages: WireMessage[], opts: { mark?: WireCacheControl; systemTag?: string } = {}): WireRequestBody {
  const mark = opts.mark ?? MARK;
  const copy = messages.map((m) => ({ ...m, content: typeof m.content === "string" ? m.content : m.content.map((b) => ({ ...b })) }));
  const last = copy[copy.length - 1];
  if (last && Array.isArray(last.content) && last.content.length) {
    (last.content[last.content.length - 1] as { cache_control?: WireCacheControl }).cache_control = mark;
  }
  return {
    tools: [{ name: "read", description: "reads", input_schema: { type: "object" }, cache_control: mark }],
    system: [{ type: "text", text: textOf(500, opts.systemTag ?? "system"), cache_control: mark }],
    messages: copy,
  };
}

export const u = (...content: WireContentBlock[]): WireMessage => ({ role: "user", content });
export const a = (...content: WireContentBlock[]): WireMessage => ({ role: "assistant", content });
