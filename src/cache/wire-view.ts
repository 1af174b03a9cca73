/**
 * The request body the cache analysis reads, from the payload Pi serialized for a provider
 * (`before_provider_request`).
 *
 * - A payload with `messages` (Anthropic Messages, OpenAI Chat Completions — whose messages
 *   `flatten.ts` reads with their fields beside the content) is read as it is.
 * - An OpenAI Responses payload (`openai-responses`, Codex, Azure: `input` items, no `messages`)
 *   is read through a view: its leading `developer` / `system` items are the system prompt, the
 *   other items are grouped into user and assistant messages — a `reasoning` item as a thinking
 *   block, a `function_call` as a tool use, a `function_call_output` as a tool result (the call's
 *   `call_id` as the id) — and each block keeps its whole item, so every byte of it takes part
 *   in the prefix hashes. The view is never sent.
 * - Anything else: undefined (not a body this analysis understands).
 */
import type { WireMessage, WireRequestBody, WireTool } from "./wire-types.ts";

type Item = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Item[]).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** The block one input item stands for, and the role of the message it belongs to. */
function blockOf(item: Item): { role: "user" | "assistant"; block: Record<string, unknown> } {
  switch (item.type) {
    case "reasoning":
      return { role: "assistant", block: { type: "thinking", thinking: textOf(item.summary), signature: String(item.encrypted_content ?? ""), item } };
    case "function_call":
    case "custom_tool_call":
      return { role: "assistant", block: { type: "tool_use", id: String(item.call_id), name: String(item.name), input: parseArguments(item.arguments ?? item.input), item } };
    case "function_call_output":
    case "custom_tool_call_output":
      return { role: "user", block: { type: "tool_result", tool_use_id: String(item.call_id), content: typeof item.output === "string" ? item.output : textOf(item.output), item } };
    default:
      return { role: item.role === "assistant" ? "assistant" : "user", block: { type: "text", text: textOf(item.content), item } };
  }
}

const isInstruction = (item: Item) => item.type === undefined || item.type === "message" ? item.role === "developer" || item.role === "system" : false;

/** A Responses payload read as a messages body (see the module comment). */
export function responsesView(payload: { input: unknown[]; tools?: unknown[] }): WireRequestBody {
  const input = payload.input.filter((i): i is Item => typeof i === "object" && i !== null);
  let start = 0;
  while (start < input.length && isInstruction(input[start]!)) start++;
  const system = input.slice(0, start).map((item) => ({ type: "text" as const, text: textOf(item.content), item }));
  const messages: WireMessage[] = [];
  for (const item of input.slice(start)) {
    const { role, block } = blockOf(item);
    const last = messages[messages.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) (last.content as unknown[]).push(block);
    else messages.push({ role, content: [block] } as WireMessage);
  }
  return { ...(payload.tools ? { tools: payload.tools as WireTool[] } : {}), ...(system.length > 0 ? { system } : {}), messages } as WireRequestBody;
}

/** What the cache analysis reads for `payload` (the payload itself, a view of it, or undefined). */
export function cacheBodyOf(payload: unknown): WireRequestBody | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const p = payload as { messages?: unknown; input?: unknown; tools?: unknown };
  if (Array.isArray(p.messages)) return payload as WireRequestBody;
  if (Array.isArray(p.input)) return responsesView(p as { input: unknown[]; tools?: unknown[] });
  return undefined;
}
