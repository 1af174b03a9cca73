/**
 * Would the provider refuse this request? The extension's render is serialized with the
 * conversion Pi and the tests use (`convertToLlm`, then `serializeForAnthropic`: pi-ai's
 * transcript clean-up, then Anthropic Messages), given the tools + system marks pi-ai adds and the seam the
 * extension adds, and checked with the fake server's own `validateRequest` (≤ 4 marks,
 * unique ids, pairing, current-loop thinking intact with its signature) plus the rules the
 * fake server leaves to Anthropic: no empty message or text block, the conversation opens
 * and ends on a user turn, no two assistant turns in a row.
 *
 * Requests to OpenAI or Google models go through the same conversion (pi-ai's transform is
 * shared); their check skips the Anthropic-only thinking rule. A render check comes first:
 * the render must not leave a call without its result (or a result without its call) where
 * the raw context had the pair, since pi-ai would then patch in "No result provided" and the
 * model would lose an output without any stub.
 */
import { convertToLlm } from "@earendil-works/pi-coding-agent";
import { serializeForAnthropic } from "../../src/report/anthropic-wire.ts";
import type { WireRequestBody } from "../../src/cache/wire-types.ts";
import { currentLoopStart, pairToolCalls } from "../../src/prune/occurrence.ts";
import { isAssistant, type ContextMessage } from "../../src/session/messages.ts";
import { signThinking } from "../support/fake-anthropic/signature.ts";
import type { EmittedResponse, WireRequest } from "../support/fake-anthropic/types.ts";
import { validateRequest } from "../support/fake-anthropic/validate.ts";
import type { Model } from "./engine-adapter.ts";

const MARK = { type: "ephemeral" as const };

/** The body pi-ai would send for `rendered` (system + one tool, each marked as pi-ai marks them). */
export function requestBody(rendered: readonly ContextMessage[], model: Model, thinkingLevel: string): WireRequestBody {
  const body = serializeForAnthropic(convertToLlm([...rendered]), { model });
  const withPrompt: WireRequestBody = {
    ...body,
    system: [{ type: "text", text: "You are a fuzzed coding agent.", cache_control: MARK }],
    tools: [{ name: "read", description: "Read a file", input_schema: { type: "object", properties: {}, required: [] }, cache_control: MARK }],
  };
  if (thinkingLevel !== "off") (withPrompt as WireRequestBody & { thinking?: unknown }).thinking = { type: "enabled", budget_tokens: 1024 };
  return withPrompt;
}

/** What the (fake) server emitted for the current loop's assistant turns, by tool-use id. */
function emittedThinking(raw: readonly ContextMessage[]): Map<string, EmittedResponse> {
  const out = new Map<string, EmittedResponse>();
  for (const m of raw.slice(currentLoopStart(raw))) {
    if (!isAssistant(m) || m.api !== "anthropic-messages") continue;
    // Every turn of the loop is recorded (a provider may reuse an id): a later turn without thinking wins.
    const first = m.content[0];
    const signed = first?.type === "thinking" && !first.redacted && first.thinkingSignature === signThinking(first.thinking);
    const response: EmittedResponse = {
      messageId: `msg_${m.timestamp}`,
      ...(signed ? { thinking: { text: first.thinking, signature: first.thinkingSignature! } } : {}),
      toolCalls: [],
      stopReason: "tool_use",
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    };
    for (const b of m.content) if (b.type === "toolCall") out.set(b.id, response);
  }
  return out;
}

function renderPairing(raw: readonly ContextMessage[], rendered: readonly ContextMessage[]): string | undefined {
  const before = pairToolCalls(raw);
  const after = pairToolCalls(rendered);
  const unanswered = new Set(before.unansweredCalls.map((c) => c.key));
  const lost = after.unansweredCalls.find((c) => !unanswered.has(c.key));
  if (lost) return `render left call ${lost.key} without its result (the raw context had it)`;
  if (after.orphanResults.length > before.orphanResults.length) return `render left ${after.orphanResults.length - before.orphanResults.length} result(s) without their call`;
  return undefined;
}

type Block = { type: string; text?: string };

function shapeRules(body: WireRequestBody): string | undefined {
  const messages = body.messages;
  if (messages.length === 0) return "messages: at least one message is required";
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const blocks: Block[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content as Block[]);
    if (blocks.length === 0) return `messages.${i}: all messages must have non-empty content`;
    const j = blocks.findIndex((b) => b.type === "text" && (b.text ?? "").trim() === "");
    if (j >= 0) return `messages.${i}.content.${j}: text content blocks must contain non-whitespace text`;
    if (m.role === "assistant" && messages[i - 1]?.role === "assistant") return `messages.${i}: two assistant turns in a row`;
  }
  if (messages[0].role !== "user") return `messages.0: the first message must use the "user" role`;
  if (messages[messages.length - 1].role !== "user") return `messages.${messages.length - 1}: the request must end with a user turn`;
  return undefined;
}

export interface RequestCheck {
  /** The context Pi built (what the `context` hook received). */
  raw: readonly ContextMessage[];
  rendered: readonly ContextMessage[];
  /** The serialized request after the extension's `before_provider_request`. */
  body: WireRequestBody;
  model: Model;
}

/** The first rule the request breaks, or undefined. */
export function checkRequest(input: RequestCheck): string | undefined {
  const pairing = renderPairing(input.raw, input.rendered);
  if (pairing) return pairing;
  const shape = shapeRules(input.body);
  if (shape) return shape;
  const anthropic = input.model.api === "anthropic-messages";
  const emitted = anthropic ? emittedThinking(input.raw) : new Map<string, EmittedResponse>();
  const body = (anthropic ? input.body : { ...input.body, thinking: undefined }) as unknown as WireRequest;
  return validateRequest(body, { emittedByToolId: (id) => emitted.get(id) });
}
