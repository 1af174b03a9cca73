/**
 * A request the fake OpenAI Responses server recorded, read as the benchmark's measure reads an
 * Anthropic one (pure), so one measure (measure.ts) and one table serve both providers:
 *
 * - input items as messages: a user message is a human turn, a `function_call_output` a tool
 *   result (in a user message, as Anthropic carries it), a `function_call` a tool use, a
 *   `reasoning` item thinking (its summary), an assistant message text; the leading
 *   developer/system items are the instructions, not messages;
 * - usage: OpenAI reports no cache write (the newly cached part is billed as plain input), so a
 *   prompt cached after it (≥ the cache's minimum) counts its unread part as written at the
 *   OpenAI weight of 1 (weights.ts) — which is what lets a bust be seen as a read shortfall
 *   against the previous request's whole prompt; a shorter prompt is plain input.
 */
import type { RecordedRequest, WireBlock, WireMessage } from "../../test/support/fake-anthropic/types.ts";
import type { JsonObject, ResponsesRecord } from "../../test/support/fake-openai/types.ts";

/** OpenAI caches nothing below this many prompt tokens (auto-cache.ts). */
const MIN_CACHED_PROMPT = 1024;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as JsonObject[]).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
}

/** The Responses input items as Anthropic-shaped messages (consecutive blocks of one role merged). */
export function messagesOfInput(input: readonly JsonObject[]): WireMessage[] {
  const out: WireMessage[] = [];
  const push = (role: "user" | "assistant", block: WireBlock) => {
    const last = out[out.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(block);
    else out.push({ role, content: [block] });
  };
  let leading = true;
  for (const item of input) {
    const role = item.role;
    if (leading && (role === "developer" || role === "system")) continue;
    leading = false;
    if (item.type === "function_call_output") push("user", { type: "tool_result", tool_use_id: String(item.call_id), content: textOf(item.output) });
    else if (item.type === "function_call") {
      let args: unknown = {};
      try {
        args = JSON.parse(String(item.arguments ?? "{}"));
      } catch {
        args = { raw: item.arguments };
      }
      push("assistant", { type: "tool_use", id: String(item.call_id), name: String(item.name ?? ""), input: args });
    } else if (item.type === "reasoning") push("assistant", { type: "thinking", thinking: textOf(item.summary) });
    else if (role === "user") push("user", { type: "text", text: textOf(item.content) });
    else if (role === "assistant") push("assistant", { type: "text", text: textOf(item.content) });
  }
  return out;
}

export function recordOfResponses(r: ResponsesRecord): RecordedRequest {
  const u = r.response?.usage;
  const written = u && u.promptTokens >= MIN_CACHED_PROMPT ? u.promptTokens - u.cachedTokens : 0;
  return {
    seq: r.seq,
    kind: r.kind,
    kindIndex: r.kindIndex,
    arrivedAtMs: r.arrivedAtMs,
    sinceStartMs: r.sinceStartMs,
    url: r.url,
    headers: r.headers,
    raw: "",
    body: { messages: messagesOfInput(r.body.input ?? []) },
    status: r.status,
    ...(r.errorMessage !== undefined ? { errorMessage: r.errorMessage } : {}),
    ...(u
      ? {
          response: {
            messageId: r.response!.responseId,
            toolCalls: [],
            stopReason: r.response!.calls.length > 0 ? "tool_use" : "end_turn",
            usage: { input_tokens: u.promptTokens - u.cachedTokens - written, cache_read_input_tokens: u.cachedTokens, cache_creation_input_tokens: written, output_tokens: u.outputTokens },
          },
        }
      : {}),
  };
}
