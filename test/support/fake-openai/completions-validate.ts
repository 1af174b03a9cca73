/**
 * The request checks the fake Chat Completions server answers with HTTP 400
 * (`invalid_request_error`), modelled on OpenAI's Chat Completions (llama.cpp, vLLM and Ollama
 * templates need the same pairing). Pure: `validateChatMessages` returns the first violation.
 *
 * Rules, in the order they are checked:
 * 1. no two tool calls share an `id` (in one message or across the request), and no two tool
 *    messages answer the same `tool_call_id`;
 * 2. every `tool` message answers a call of the assistant message right before its run of tool
 *    messages;
 * 3. every assistant tool call is answered by a tool message in the run right after it.
 */
import { firstDuplicate } from "../fake-core.ts";
import type { ChatMessage } from "./types.ts";

export type ChatViolation = { message: string; param: string };

function callIds(m: ChatMessage | undefined): string[] {
  return m?.role === "assistant" ? (m.tool_calls ?? []).map((c) => String(c.id)) : [];
}

function checkDuplicates(messages: ChatMessage[]): ChatViolation | undefined {
  const call = firstDuplicate(messages.flatMap(callIds));
  if (call) return { message: `Invalid parameter: duplicate tool_call id '${call}' in 'tool_calls'.`, param: "messages" };
  const answered = firstDuplicate(messages.filter((m) => m.role === "tool").map((m) => String(m.tool_call_id)));
  if (answered) return { message: `Invalid parameter: more than one 'tool' message responds to tool_call_id '${answered}'.`, param: "messages" };
  return undefined;
}

function checkPairing(messages: ChatMessage[]): ChatViolation | undefined {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "tool") {
      let a = i - 1;
      while (a >= 0 && messages[a]!.role === "tool") a--;
      if (!callIds(messages[a]).includes(String(m.tool_call_id))) {
        return { message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: `messages.[${i}].role` };
      }
    }
    const calls = callIds(m);
    if (calls.length === 0) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j]!.role === "tool"; j++) answered.add(String(messages[j]!.tool_call_id));
    const missing = calls.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      return {
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`,
        param: `messages.[${i}].role`,
      };
    }
  }
  return undefined;
}

/** First rule the messages break, as OpenAI words it; undefined when valid. */
export function validateChatMessages(messages: ChatMessage[]): ChatViolation | undefined {
  return checkDuplicates(messages) ?? checkPairing(messages);
}
