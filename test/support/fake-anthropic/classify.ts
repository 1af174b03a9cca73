/**
 * Main loop vs side requests.
 *
 * Rule (default classifier): a request is **main** when its `tools` array offers at least one of
 * Pi's built-in coding tools (`read`, `bash`, `edit`, `write`) AND its system prompt is not Pi's
 * compaction prompt ("You are a context summarization assistant"). Everything else is **side**:
 * Pi's compaction / branch summaries (seen on the wire: Pi's summarization system prompt, no
 * `tools`, no `cache_control`) and any summarizer call this project makes without tools.
 *
 * A summarizer that re-sends the main prefix (same tools and system prompt) to reuse the cache
 * would be classified main; such tests pass their own classifier, e.g. `classifyByLastUserText`.
 */
import type { RequestClassifier, RequestKind, WireRequest } from "./types.ts";

export const PI_BUILTIN_TOOLS = ["read", "bash", "edit", "write"] as const;
export const PI_SUMMARIZATION_PROMPT_START = "You are a context summarization assistant";

export function systemText(body: WireRequest): string {
  if (typeof body.system === "string") return body.system;
  if (!Array.isArray(body.system)) return "";
  return body.system.map((b) => (typeof b.text === "string" ? b.text : "")).join("\n");
}

export const classifyRequest: RequestClassifier = (body) => {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const offersPiTool = tools.some((t) => (PI_BUILTIN_TOOLS as readonly string[]).includes(t.name));
  if (!offersPiTool) return "side";
  return systemText(body).includes(PI_SUMMARIZATION_PROMPT_START) ? "side" : "main";
};

/** Text of the last user message (text blocks only), "" when there is none. */
export function lastUserText(body: WireRequest): string {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const m = body.messages[i];
    if (m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    return m.content.filter((b) => b.type === "text").map((b) => String(b.text ?? "")).join("\n");
  }
  return "";
}

/** A classifier that marks requests whose last user text contains `marker` as side, else defers to the default. */
export function classifyByLastUserText(marker: string): RequestClassifier {
  return (body): RequestKind => (lastUserText(body).includes(marker) ? "side" : classifyRequest(body));
}
