/**
 * Main loop vs side requests on the OpenAI wire formats, by the fake Anthropic server's rule
 * (../fake-anthropic/classify.ts): main when the tools (Responses: also those of
 * `additional_tools` items) offer one of Pi's built-in coding tools and the instructions are not
 * Pi's summarization prompt; side otherwise (Pi's compaction and branch summaries, this
 * project's summarizer calls). The instructions are the leading `developer` / `system` item or
 * message.
 */
import { PI_BUILTIN_TOOLS, PI_SUMMARIZATION_PROMPT_START } from "../fake-anthropic/classify.ts";
import type { ChatMessage, ChatRequest, JsonObject, ResponsesRequest } from "./types.ts";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as JsonObject[]).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
}

const isInstruction = (role: unknown) => role === "developer" || role === "system";

/** The text of the leading developer/system entries (Responses items, Chat Completions messages). */
function leadingInstructions(entries: ReadonlyArray<{ role?: unknown; content?: unknown }>): string {
  const out: string[] = [];
  for (const e of entries) {
    if (!isInstruction(e.role)) break;
    out.push(textOf(e.content));
  }
  return out.join("\n");
}

/** The instruction text of a Responses request. */
export const responsesInstructions = (body: ResponsesRequest): string => leadingInstructions(body.input);

/** The instruction text of a Chat Completions request. */
export const chatInstructions = (body: ChatRequest): string => leadingInstructions(body.messages);

function offersPiTool(names: string[]): boolean {
  return names.some((n) => (PI_BUILTIN_TOOLS as readonly string[]).includes(n));
}

/** The tools a Responses request declares: at the top level, and in `additional_tools` input items (Codex on models that take them). */
export function responsesToolNames(body: ResponsesRequest): string[] {
  const anchored = body.input.filter((i) => i.type === "additional_tools").flatMap((i) => (Array.isArray(i.tools) ? (i.tools as JsonObject[]) : []));
  return [...(body.tools ?? []), ...anchored].map((t) => String(t.name ?? ""));
}

export function classifyResponses(body: ResponsesRequest): "main" | "side" {
  const names = responsesToolNames(body);
  if (!offersPiTool(names)) return "side";
  return responsesInstructions(body).includes(PI_SUMMARIZATION_PROMPT_START) ? "side" : "main";
}

export function classifyChat(body: ChatRequest): "main" | "side" {
  const names = (body.tools ?? []).map((t) => String(t.function?.name ?? ""));
  if (!offersPiTool(names)) return "side";
  return chatInstructions(body).includes(PI_SUMMARIZATION_PROMPT_START) ? "side" : "main";
}

/** Text of the last user input item (Responses). */
export function lastUserTextOfResponses(body: ResponsesRequest): string {
  for (let i = body.input.length - 1; i >= 0; i--) {
    const item = body.input[i]!;
    if (item.role === "user") return textOf(item.content);
  }
  return "";
}

/** Text of the last user message (Chat Completions). */
export function lastUserTextOfChat(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "user") return textOf(messages[i]!.content);
  return "";
}
