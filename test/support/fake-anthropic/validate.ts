/**
 * The request checks the fake server answers with HTTP 400, modelled on Anthropic's rules.
 * Pure: `validateRequest` returns the first violation's message, or undefined when the
 * request is acceptable.
 *
 * Rules, in the order they are checked:
 * 1. at most 4 `cache_control` marks over tools + system + messages;
 * 2. no duplicate tool ids inside one message (tool_use ids, or tool_result tool_use_ids);
 * 3. every `tool_use` has its `tool_result` in the very next message, which must be a user message;
 * 4. every `tool_result` answers a `tool_use` of the immediately previous assistant message;
 * 5. (only when the request enables thinking) the current tool loop — the assistant turns after
 *    the last user message that holds anything but tool_results — carries its thinking intact:
 *    every thinking block there bears the signature the server issued for exactly its text, and an
 *    assistant turn the server emitted with thinking (found through its tool_use ids) still starts
 *    with that very thinking block.
 */
import { firstDuplicate } from "../fake-core.ts";
import { isValidThinkingSignature } from "./signature.ts";
import type { EmittedResponse, WireBlock, WireMessage, WireRequest } from "./types.ts";

export const MAX_CACHE_CONTROL_MARKS = 4;

export type ValidateOptions = {
  signatureSecret?: string;
  /** The response the server emitted that issued this tool-use id, if any. */
  emittedByToolId?: (id: string) => EmittedResponse | undefined;
};

function blocksOf(m: WireMessage): WireBlock[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
}

export function countCacheControlMarks(body: WireRequest): number {
  let n = 0;
  for (const t of body.tools ?? []) if (t.cache_control) n++;
  if (Array.isArray(body.system)) for (const b of body.system) if (b.cache_control) n++;
  for (const m of body.messages) for (const b of blocksOf(m)) if (b.cache_control) n++;
  return n;
}

function toolUseIds(m: WireMessage | undefined): string[] {
  if (!m || m.role !== "assistant") return [];
  return blocksOf(m).filter((b) => b.type === "tool_use").map((b) => String(b.id));
}

function toolResultIds(m: WireMessage | undefined): string[] {
  if (!m || m.role !== "user") return [];
  return blocksOf(m).filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id));
}

/** A user message that holds something other than tool_results opens a new cycle. */
export function isHumanTurn(m: WireMessage): boolean {
  return m.role === "user" && blocksOf(m).some((b) => b.type !== "tool_result");
}

/** Index of the first message of the current tool loop (messages after the last human turn). */
export function currentToolLoopStart(messages: WireMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isHumanTurn(messages[i])) return i + 1;
  return 0;
}

function checkCacheMarks(body: WireRequest): string | undefined {
  const n = countCacheControlMarks(body);
  if (n <= MAX_CACHE_CONTROL_MARKS) return undefined;
  return `A maximum of ${MAX_CACHE_CONTROL_MARKS} blocks with cache_control may be provided. Found ${n}.`;
}

function checkDuplicateIds(messages: WireMessage[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const dupUse = firstDuplicate(toolUseIds(messages[i]));
    if (dupUse) return `messages.${i}: \`tool_use\` ids must be unique, found duplicate id ${dupUse}`;
    const dupResult = firstDuplicate(toolResultIds(messages[i]));
    if (dupResult) return `messages.${i}: each tool_use_id may have only one tool_result, found duplicate ${dupResult}`;
  }
  return undefined;
}

function checkPairing(messages: WireMessage[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const uses = toolUseIds(messages[i]);
    if (uses.length > 0) {
      const answered = new Set(toolResultIds(messages[i + 1]));
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
    const results = toolResultIds(messages[i]);
    if (results.length > 0) {
      const offered = new Set(toolUseIds(messages[i - 1]));
      const orphan = results.find((id) => !offered.has(id));
      if (orphan) {
        return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${orphan}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
  }
  return undefined;
}

function thinkingEnabled(body: WireRequest): boolean {
  const type = body.thinking?.type;
  return type === "enabled" || type === "adaptive";
}

function checkCurrentLoopThinking(body: WireRequest, opts: ValidateOptions): string | undefined {
  if (!thinkingEnabled(body)) return undefined;
  const messages = body.messages;
  for (let i = currentToolLoopStart(messages); i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== "assistant") continue;
    const blocks = blocksOf(m);
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      if (b.type !== "thinking") continue;
      if (!isValidThinkingSignature(String(b.thinking ?? ""), String(b.signature ?? ""), opts.signatureSecret)) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
    }
    const emitted = toolUseIds(m)
      .map((id) => opts.emittedByToolId?.(id))
      .find((e): e is EmittedResponse => e !== undefined);
    if (!emitted?.thinking) continue;
    const first = blocks[0];
    const intact =
      first?.type === "thinking" && first.thinking === emitted.thinking.text && first.signature === emitted.thinking.signature;
    if (!intact) {
      return `messages.${i}.content.0: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type ?? "nothing"}\`. When \`thinking\` is enabled, the assistant turns of the current tool loop must keep their thinking blocks complete and unmodified.`;
    }
  }
  return undefined;
}

/** First rule the request breaks, as an Anthropic-style error message; undefined when valid. */
export function validateRequest(body: WireRequest, opts: ValidateOptions = {}): string | undefined {
  if (!Array.isArray(body.messages)) return "messages: Field required";
  return (
    checkCacheMarks(body) ??
    checkDuplicateIds(body.messages) ??
    checkPairing(body.messages) ??
    checkCurrentLoopThinking(body, opts)
  );
}
