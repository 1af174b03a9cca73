/**
 * Reading request bodies of the OpenAI and Google formats (Responses input items, Chat
 * Completions messages, Gemini contents) as one flat list of wire items, for the e2e tests that
 * run the same checks on each format: human prompts, the keeper's stubs and compressed chains,
 * calls and their results, reasoning and what it went with.
 */
import type { GeminiRequest } from "../../support/fake-google/index.ts";
import type { ChatRequest, JsonObject, ResponsesRequest } from "../../support/fake-openai/index.ts";
import { CHAIN_HEAD, CHAIN_REF, STUB_HEAD, STUB_REF } from "./recall-wire.ts";

export type WireItem =
  | { kind: "instruction"; text: string }
  | { kind: "user"; text: string }
  | { kind: "text"; text: string; id?: string }
  | { kind: "reasoning"; text: string; id?: string }
  /** `signature`: the thought signature on a Gemini function call part. */
  | { kind: "call"; callId: string; id?: string; name: string; args: string; signature?: string }
  | { kind: "result"; callId: string; text: string };

export type WireBody = ResponsesRequest | ChatRequest | GeminiRequest;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as JsonObject[]).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
}

function responsesItems(body: ResponsesRequest): WireItem[] {
  return body.input.map((i): WireItem => {
    if (i.type === "reasoning") return { kind: "reasoning", text: textOf(i.summary), id: String(i.id) };
    if (i.type === "function_call") return { kind: "call", callId: String(i.call_id), ...(typeof i.id === "string" ? { id: i.id } : {}), name: String(i.name), args: String(i.arguments) };
    if (i.type === "function_call_output") return { kind: "result", callId: String(i.call_id), text: textOf(i.output) };
    if (i.role === "assistant") return { kind: "text", text: textOf(i.content), ...(typeof i.id === "string" ? { id: i.id } : {}) };
    if (i.role === "user") return { kind: "user", text: textOf(i.content) };
    return { kind: "instruction", text: textOf(i.content) };
  });
}

function chatItems(body: ChatRequest): WireItem[] {
  return body.messages.flatMap((m): WireItem[] => {
    if (m.role === "tool") return [{ kind: "result", callId: String(m.tool_call_id), text: textOf(m.content) }];
    if (m.role === "user") return [{ kind: "user", text: textOf(m.content) }];
    if (m.role !== "assistant") return [{ kind: "instruction", text: textOf(m.content) }];
    const out: WireItem[] = [];
    if (typeof m.reasoning_content === "string") out.push({ kind: "reasoning", text: m.reasoning_content });
    const text = textOf(m.content);
    if (text) out.push({ kind: "text", text });
    for (const c of m.tool_calls ?? []) out.push({ kind: "call", callId: c.id, name: String(c.function?.name), args: String(c.function?.arguments) });
    return out;
  });
}

/** Gemini contents: a call's id is its own, else its place (content index, then k), as its response's. */
function geminiItems(body: GeminiRequest): WireItem[] {
  const system = textOf(body.systemInstruction?.parts);
  const out: WireItem[] = system ? [{ kind: "instruction", text: system }] : [];
  body.contents.forEach((c, ci) => {
    let calls = 0;
    let responses = 0;
    for (const p of c.parts) {
      if (p.functionCall) {
        const call = p.functionCall;
        out.push({ kind: "call", callId: call.id ?? `${ci}#${calls++}`, name: call.name, args: JSON.stringify(call.args ?? {}), ...(p.thoughtSignature ? { signature: p.thoughtSignature } : {}) });
      }
      else if (p.functionResponse) {
        const r = p.functionResponse.response ?? {};
        out.push({ kind: "result", callId: p.functionResponse.id ?? `${ci - 1}#${responses++}`, text: String(r.output ?? r.error ?? "") });
      } else if (typeof p.text === "string") out.push(p.thought ? { kind: "reasoning", text: p.text } : { kind: c.role === "model" ? "text" : "user", text: p.text });
    }
  });
  return out;
}

/** The body's items, whichever format it is in. */
export function wireItems(body: WireBody): WireItem[] {
  if ("contents" in body && Array.isArray(body.contents)) return geminiItems(body as GeminiRequest);
  return "input" in body && Array.isArray(body.input) ? responsesItems(body as ResponsesRequest) : chatItems(body as ChatRequest);
}

/** Index of the last user item (the human prompt the current tool loop answers), -1 when none. */
export function lastPromptIndex(items: WireItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === "user" && !item.text.startsWith(CHAIN_HEAD)) return i;
  }
  return -1;
}

export const stubsOf = (items: WireItem[]) => items.filter((i): i is Extract<WireItem, { kind: "result" }> => i.kind === "result" && i.text.startsWith(STUB_HEAD));
export const chainsOf = (items: WireItem[]) => items.filter((i) => (i.kind === "user" || i.kind === "text") && i.text.startsWith(CHAIN_HEAD));

/** Refs of every stub and compressed-chain call line before `end`, in order, deduplicated. */
export function refsOf(items: WireItem[], end = items.length): string[] {
  const refs: string[] = [];
  const add = (r: string | undefined) => r && !refs.includes(r) && refs.push(r);
  for (const i of items.slice(0, end)) {
    if ((i.kind === "user" || i.kind === "text") && i.text.startsWith(CHAIN_HEAD)) for (const m of i.text.matchAll(CHAIN_REF)) add(m[1]);
    if (i.kind === "result" && i.text.startsWith(STUB_HEAD)) add(STUB_REF.exec(i.text)?.[1]);
  }
  return refs;
}

/** `keeper_recall` calls after the last prompt, each with its result text. */
export function recallCalls(items: WireItem[]): Array<{ input: Record<string, unknown>; text: string }> {
  const results = new Map(items.flatMap((i) => (i.kind === "result" ? [[i.callId, i.text] as const] : [])));
  return items
    .slice(lastPromptIndex(items) + 1)
    .flatMap((i) => (i.kind === "call" && i.name === "keeper_recall" && results.has(i.callId) ? [{ input: JSON.parse(i.args) as Record<string, unknown>, text: results.get(i.callId)! }] : []));
}
