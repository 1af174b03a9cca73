/**
 * Encodes one emitted assistant message as Anthropic's streaming SSE events:
 * message_start (with usage) → per block content_block_start / *_delta… / content_block_stop
 * (thinking: thinking_delta… then one signature_delta; text: text_delta…; tool_use:
 * input_json_delta…) → message_delta (stop_reason + usage) → message_stop.
 */
import type { EmittedResponse, ScriptedError } from "./types.ts";

const CHUNK = 64;

function chunks(s: string, size = CHUNK): string[] {
  if (s.length === 0) return [];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function sse(event: string, data: Record<string, unknown>): string {
  return `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
}

/** The SSE events for `r`, one string per event (join them for the whole body). */
export function encodeSseEvents(r: EmittedResponse, model: string): string[] {
  const events: string[] = [];
  events.push(
    sse("message_start", {
      message: {
        id: r.messageId,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...r.usage, output_tokens: 1 },
        ...(r.inputTransformations ? { input_transformations: r.inputTransformations } : {}),
      },
    }),
  );
  events.push(sse("ping", {}));
  let index = 0;
  if (r.thinking) {
    events.push(sse("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }));
    for (const part of chunks(r.thinking.text)) {
      events.push(sse("content_block_delta", { index, delta: { type: "thinking_delta", thinking: part } }));
    }
    events.push(sse("content_block_delta", { index, delta: { type: "signature_delta", signature: r.thinking.signature } }));
    events.push(sse("content_block_stop", { index }));
    index++;
  }
  if (r.text !== undefined) {
    events.push(sse("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const part of chunks(r.text)) events.push(sse("content_block_delta", { index, delta: { type: "text_delta", text: part } }));
    events.push(sse("content_block_stop", { index }));
    index++;
  }
  for (const call of r.toolCalls) {
    events.push(sse("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }));
    for (const part of chunks(JSON.stringify(call.input))) {
      events.push(sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } }));
    }
    events.push(sse("content_block_stop", { index }));
    index++;
  }
  events.push(sse("message_delta", { delta: { stop_reason: r.stopReason, stop_sequence: null }, usage: r.usage }));
  events.push(sse("message_stop", {}));
  return events;
}

/** Anthropic's error body: `{"type":"error","error":{"type":…,"message":…[,"details":…]}}` (thread refusals carry `details.error_code`). */
export function errorBody(e: Pick<ScriptedError, "type" | "message" | "details">): string {
  return JSON.stringify({ type: "error", error: { type: e.type, message: e.message, ...(e.details ? { details: e.details } : {}) } });
}
