/**
 * What the looking-back fake model reads in a request (pure): all the text the model is shown,
 * the refs by which each arm lets it get an output back, and what the recall tools offer.
 *
 * - Text: text blocks, tool results, and the string values of tool-call arguments, of every
 *   message (thinking is left out: a fact the model only thought of is not one it can quote).
 * - This extension's ref for an output: an occurrence key `<tool-call id>@<timestamp>#<n>` of
 *   one of the calls that produced it, anywhere in the text (a stub, a chain line, a recall call).
 * - pi-condense's: the short ref (`tN`) of the stub that replaced the call's result; else a line
 *   naming both the call (its path or command) and a short ref; else the raw tool-call id in a
 *   text (its query tool takes raw ids too).
 */
import type { WireBlock, WireMessage, WireRequest } from "../../test/support/fake-anthropic/types.ts";

export const KEEPER_RECALL_TOOL = "keeper_recall";
export const CONDENSE_QUERY_TOOL = "context_tree_query";

const blocksOf = (m: WireMessage): WireBlock[] => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);

function stringsIn(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) stringsIn(v, out);
}

/** The text of a tool result's content (a string or text blocks). */
export function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as WireBlock[]).map((b) => (typeof b.text === "string" ? b.text : "")).join("\n");
}

/** Every text the request shows the model, one string. */
export function requestText(body: WireRequest): string {
  const out: string[] = [];
  for (const m of body.messages) {
    for (const b of blocksOf(m)) {
      if (b.type === "text" && typeof b.text === "string") out.push(b.text);
      else if (b.type === "tool_result") out.push(toolResultText(b.content));
      else if (b.type === "tool_use") stringsIn(b.input, out);
    }
  }
  return out.join("\n");
}

/** Tool results of the request's last message (the outputs the model has not seen before), by tool-use id. */
export function newToolResults(body: WireRequest): Map<string, { text: string; isError: boolean }> {
  const last = body.messages[body.messages.length - 1];
  const out = new Map<string, { text: string; isError: boolean }>();
  if (!last || last.role !== "user") return out;
  for (const b of blocksOf(last)) if (b.type === "tool_result") out.set(String(b.tool_use_id), { text: toolResultText(b.content), isError: b.is_error === true });
  return out;
}

/** Every tool result of the request by tool-use id (the last one wins). */
export function allToolResults(body: WireRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of body.messages) for (const b of blocksOf(m)) if (b.type === "tool_result") out.set(String(b.tool_use_id), toolResultText(b.content));
  return out;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** This extension's ref of an output produced by one of `ids`, when the text shows one. */
export function keeperRefIn(text: string, ids: readonly string[]): string | undefined {
  for (const id of ids) {
    const m = new RegExp(`(?<![\\w-])(${escapeRegExp(id)}@\\d+#\\d+)`).exec(text);
    if (m) return m[1];
  }
  return undefined;
}

const CONDENSE_STUB_REF = /ref `([^`]+)`/;

/** pi-condense's ref of an output produced by one of `ids` (see the module comment). */
export function condenseRefIn(body: WireRequest, text: string, ids: readonly string[], target: string): string | undefined {
  for (const m of body.messages) {
    for (const b of blocksOf(m)) {
      if (b.type !== "tool_result" || !ids.includes(String(b.tool_use_id))) continue;
      const hit = CONDENSE_STUB_REF.exec(toolResultText(b.content));
      if (hit) return hit[1];
    }
  }
  for (const line of text.split("\n")) {
    if (!line.includes(target)) continue;
    const short = /`(t\d+)`/.exec(line);
    if (short) return short[1];
  }
  for (const id of ids) if (new RegExp(`(?<![\\w-])${escapeRegExp(id)}(?![\\w-])`).test(textOutsideToolUse(body))) return id;
  return undefined;
}

/** Text blocks and tool results only (a tool call's own id is not a ref the model was shown). */
function textOutsideToolUse(body: WireRequest): string {
  const out: string[] = [];
  for (const m of body.messages) {
    for (const b of blocksOf(m)) {
      if (b.type === "text" && typeof b.text === "string") out.push(b.text);
      else if (b.type === "tool_result") out.push(toolResultText(b.content));
    }
  }
  return out.join("\n");
}

/** Whether the request offers a tool, and the parameter names of its input schema. */
export function offeredTool(body: WireRequest, name: string): { offered: boolean; parameters: Set<string> } {
  const tool = (body.tools ?? []).find((t) => t.name === name);
  const props = (tool?.input_schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  return { offered: tool !== undefined, parameters: new Set(Object.keys(props)) };
}

/** The next offset a `keeper_recall` page header announces, if any. */
export function nextRecallOffset(pageText: string): number | undefined {
  const header = pageText.split("\n", 1)[0] ?? "";
  const m = /next offset (\d+)/.exec(header);
  return m ? Number(m[1]) : undefined;
}

export { escapeRegExp };
