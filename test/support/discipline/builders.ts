/** Small wire-payload builders and a round-number token estimator for the discipline tests. */
import type { FlatBlock } from "../../../src/cache/flatten.ts";
import type { TokenEstimator } from "../../../src/cache/token-estimator.ts";
import type { WireCacheControl, WireContentBlock, WireMessage, WireRequestBody } from "../../../src/cache/wire-types.ts";

/** Tool definition 1000 tokens; text and tool_result chars/4; tool_use 10; thinking chars/4. */
export const roundEstimator: TokenEstimator = (b: FlatBlock) => {
  if (b.type === "tool") return 1000;
  if (b.type === "tool_use") return 10;
  if (b.type === "text") return Math.ceil(String(b.block.text).length / 4);
  if (b.type === "thinking") return Math.ceil(String(b.block.thinking).length / 4);
  if (b.type === "tool_result") return Math.ceil(String(b.block.content).length / 4);
  return 0;
};

/** Exactly `tokens` tokens under roundEstimator, unique by tag. */
export function body(tokens: number, tag: string): string {
  const base = `${tag}:`;
  return (base + "x".repeat(Math.max(0, tokens * 4 - base.length))).slice(0, tokens * 4);
}

export const M5: WireCacheControl = { type: "ephemeral" };
export const M1H: WireCacheControl = { type: "ephemeral", ttl: "1h" };

export const txt = (tokens: number, tag: string, mark?: WireCacheControl): WireContentBlock =>
  mark ? { type: "text", text: body(tokens, tag), cache_control: mark } : { type: "text", text: body(tokens, tag) };
export const use = (id: string): WireContentBlock => ({ type: "tool_use", id, name: "read", input: { path: id } });
export const res = (id: string, tokens: number, mark?: WireCacheControl): WireContentBlock =>
  mark
    ? { type: "tool_result", tool_use_id: id, content: body(tokens, id), cache_control: mark }
    : { type: "tool_result", tool_use_id: id, content: body(tokens, id) };
export const think = (tokens: number, tag: string): WireContentBlock => ({ type: "thinking", thinking: body(tokens, tag), signature: `sig-${tag}` });

export const u = (...content: WireContentBlock[]): WireMessage => ({ role: "user", content });
export const a = (...content: WireContentBlock[]): WireMessage => ({ role: "assistant", content });

/** A pi-shaped payload: one tool and one system block, both marked with `mark` (null: unmarked); marks on messages are the caller's. */
export function payload(messages: WireMessage[], mark: WireCacheControl | null = M5): WireRequestBody {
  return {
    model: "claude-sonnet-4-5",
    tools: [{ name: "read", description: "read a file", input_schema: {}, ...(mark ? { cache_control: mark } : {}) }],
    system: [{ type: "text", text: body(500, "system"), ...(mark ? { cache_control: mark } : {}) }],
    messages,
  };
}

/** Every cache_control mark of a payload, in prefix order. */
export function marksOf(p: WireRequestBody): WireCacheControl[] {
  const out: WireCacheControl[] = [];
  for (const t of p.tools ?? []) if (t.cache_control) out.push(t.cache_control);
  if (Array.isArray(p.system)) for (const s of p.system) if (s.cache_control) out.push(s.cache_control);
  for (const m of p.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.cache_control) out.push(b.cache_control);
  return out;
}
