/**
 * Encodes one emitted turn as Chat Completions streaming chunks (`data: {chunk}` frames, then
 * `data: [DONE]`), as pi-ai's openai-completions stream reads them: a role chunk, the reasoning as
 * `reasoning_content` deltas (llama.cpp's field), the text as `content` deltas, each tool call as
 * a first chunk with its id and name then argument pieces, a chunk with the `finish_reason`, and
 * a last chunk with no choices and the usage (`prompt_tokens_details.cached_tokens`).
 */
import type { EmittedTurn, JsonObject } from "./types.ts";

const CHUNK = 64;

function chunks(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += CHUNK) out.push(s.slice(i, i + CHUNK));
  return out;
}

export function encodeChatChunks(t: EmittedTurn, model: string, created: number): string[] {
  const frames: string[] = [];
  const chunk = (choices: JsonObject[], extra: JsonObject = {}) =>
    frames.push(`data: ${JSON.stringify({ id: t.responseId, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`);
  const delta = (d: JsonObject, finish_reason: string | null = null) => chunk([{ index: 0, delta: d, finish_reason }]);
  delta({ role: "assistant", content: "" });
  for (const part of chunks(t.reasoning?.text ?? "")) delta({ reasoning_content: part });
  for (const part of chunks(t.message?.text ?? "")) delta({ content: part });
  t.calls.forEach((c, index) => {
    delta({ tool_calls: [{ index, id: c.callId, type: "function", function: { name: c.name, arguments: "" } }] });
    for (const part of chunks(c.arguments)) delta({ tool_calls: [{ index, function: { arguments: part } }] });
  });
  delta({}, t.finish);
  const u = t.usage;
  chunk([], {
    usage: {
      prompt_tokens: u.promptTokens,
      completion_tokens: u.outputTokens,
      total_tokens: u.promptTokens + u.outputTokens,
      prompt_tokens_details: { cached_tokens: u.cachedTokens },
      completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
    },
  });
  frames.push("data: [DONE]\n\n");
  return frames;
}
