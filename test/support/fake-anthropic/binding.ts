/**
 * Thinking bound to its prefix (`thinking.block_binding.prefix_mismatch_behavior: "drop_block"`,
 * which pi-ai sends for managed-effort Claude models: `compat.supportsMidConvoEffort`, e.g. Opus 5,
 * Fable 5.1, the 5.5 family). A thinking block is valid only after the very conversation it was
 * generated from (model, system, tools and every message before its assistant message); when an
 * earlier part changed, the API drops the block instead of answering 400 ("bound to a different
 * conversation") and says so in `message_start.message.input_transformations`:
 * `{type: "thinking_dropped", path: "messages.<i>.content.<j>", reason: "prefix_mismatch"}` —
 * what pi-ai records as an `anthropic_input_transformations` diagnostic on the assistant message
 * (and Pi's transcript notice counts by `type === "thinking_dropped"`).
 *
 * The fake binds each thinking block it emits (by signature) to a hash of its request's prefix,
 * cache marks aside and string content read as one text block (both the same to the API), and on
 * a `drop_block` request reports every block whose prefix no longer matches. Usage is left as it
 * is: the fake does not guess how a dropped block is billed.
 */
import { createHash } from "node:crypto";
import type { WireBlock, WireMessage, WireRequest } from "./types.ts";

export type InputTransformation = { type: "thinking_dropped"; path: string; reason: "prefix_mismatch" };

const unmarked = (value: unknown): string => JSON.stringify(value, (k, v) => (k === "cache_control" ? undefined : v));
const blocksOf = (m: WireMessage): WireBlock[] => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);

export function dropsMismatchedBlocks(body: WireRequest): boolean {
  const binding = (body.thinking as { block_binding?: { prefix_mismatch_behavior?: string } } | undefined)?.block_binding;
  return binding?.prefix_mismatch_behavior === "drop_block";
}

/** The hashes of `body`'s prefixes: [k] covers model, system, tools and messages[0..k). */
function prefixHashes(body: WireRequest): string[] {
  let h = createHash("sha256").update(unmarked({ model: body.model, system: body.system ?? null, tools: body.tools ?? null })).digest("hex");
  const out = [h];
  for (const m of body.messages) {
    h = createHash("sha256").update(h).update(unmarked({ ...m, content: blocksOf(m) })).digest("hex");
    out.push(h);
  }
  return out;
}

export interface BindingStore {
  /** The thinking blocks `body` (the full request) carries whose prefix changed since they were generated. */
  dropped(body: WireRequest): InputTransformation[];
  /** A thinking block emitted in answer to `body`: bound to all of it. */
  bind(body: WireRequest, signature: string): void;
}

export function createBindingStore(): BindingStore {
  const bound = new Map<string, Set<string>>();
  return {
    dropped(body) {
      if (!dropsMismatchedBlocks(body)) return [];
      const hashes = prefixHashes(body);
      const out: InputTransformation[] = [];
      body.messages.forEach((m, i) => {
        if (m.role !== "assistant") return;
        blocksOf(m).forEach((b, j) => {
          const prefixes = b.type === "thinking" ? bound.get(String(b.signature ?? "")) : undefined;
          if (prefixes && !prefixes.has(hashes[i]!)) out.push({ type: "thinking_dropped", path: `messages.${i}.content.${j}`, reason: "prefix_mismatch" });
        });
      });
      return out;
    },
    bind(body, signature) {
      const hash = prefixHashes(body).at(-1)!;
      const prefixes = bound.get(signature) ?? new Set<string>();
      prefixes.add(hash);
      bound.set(signature, prefixes);
    },
  };
}
