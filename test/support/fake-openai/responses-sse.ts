/**
 * Encodes one emitted turn as OpenAI Responses streaming events, as pi-ai's
 * `processResponsesStream` reads them (`event:` + `data:` frames):
 * response.created → per output item: output_item.added, its deltas (reasoning summary parts,
 * output text, function call arguments), output_item.done (with the finished item: the reasoning
 * item's summary and `encrypted_content`, the message's text, the call's arguments) →
 * response.completed (status, the output items, usage with `input_tokens_details.cached_tokens`,
 * and `cache_write_tokens` where the server reports writes). `responsesEvents` gives the same
 * events as objects: Codex sends each as one WebSocket message.
 */
import type { EmittedTurn, JsonObject } from "./types.ts";

const CHUNK = 64;

function chunks(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += CHUNK) out.push(s.slice(i, i + CHUNK));
  return out;
}

/** The finished output items of `t`, in stream order (reasoning → message → function calls). */
export function outputItems(t: EmittedTurn): JsonObject[] {
  const items: JsonObject[] = [];
  if (t.reasoning) {
    items.push({ type: "reasoning", id: t.reasoning.id, summary: [{ type: "summary_text", text: t.reasoning.text }], encrypted_content: t.reasoning.encryptedContent });
  }
  if (t.message) {
    items.push({ type: "message", id: t.message.id, status: "completed", role: "assistant", content: [{ type: "output_text", text: t.message.text, annotations: [] }] });
  }
  for (const c of t.calls) items.push({ type: "function_call", id: c.itemId, call_id: c.callId, name: c.name, arguments: c.arguments, status: "completed" });
  return items;
}

/** The SSE frames of `t` (`event:` + `data:`). */
export function encodeResponsesEvents(t: EmittedTurn, model: string): string[] {
  return responsesEvents(t, model).map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
}

/** The streaming events of `t`, in order. */
export function responsesEvents(t: EmittedTurn, model: string): JsonObject[] {
  let seq = 0;
  const events: JsonObject[] = [];
  const push = (type: string, data: JsonObject) => events.push({ type, sequence_number: seq++, ...data });
  const response = { id: t.responseId, object: "response", model, status: "in_progress", output: [] as JsonObject[] };
  push("response.created", { response });
  outputItems(t).forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === "reasoning") {
      push("response.output_item.added", { output_index, item: { type: "reasoning", id: item_id, summary: [] } });
      const text = t.reasoning!.text;
      push("response.reasoning_summary_part.added", { item_id, output_index, summary_index: 0, part: { type: "summary_text", text: "" } });
      for (const delta of chunks(text)) push("response.reasoning_summary_text.delta", { item_id, output_index, summary_index: 0, delta });
      push("response.reasoning_summary_text.done", { item_id, output_index, summary_index: 0, text });
      push("response.reasoning_summary_part.done", { item_id, output_index, summary_index: 0, part: { type: "summary_text", text } });
    } else if (item.type === "message") {
      const text = t.message!.text;
      push("response.output_item.added", { output_index, item: { type: "message", id: item_id, status: "in_progress", role: "assistant", content: [] } });
      push("response.content_part.added", { item_id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      for (const delta of chunks(text)) push("response.output_text.delta", { item_id, output_index, content_index: 0, delta });
      push("response.output_text.done", { item_id, output_index, content_index: 0, text });
      push("response.content_part.done", { item_id, output_index, content_index: 0, part: { type: "output_text", text, annotations: [] } });
    } else {
      push("response.output_item.added", { output_index, item: { ...item, arguments: "", status: "in_progress" } });
      const args = String(item.arguments);
      for (const delta of chunks(args)) push("response.function_call_arguments.delta", { item_id, output_index, delta });
      push("response.function_call_arguments.done", { item_id, output_index, arguments: args });
    }
    push("response.output_item.done", { output_index, item });
  });
  const u = t.usage;
  const usage = {
    input_tokens: u.promptTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens, ...(u.cacheWriteTokens !== undefined ? { cache_write_tokens: u.cacheWriteTokens } : {}) },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.promptTokens + u.outputTokens,
  };
  push("response.completed", { response: { ...response, status: t.finish, output: outputItems(t), usage } });
  return events;
}
