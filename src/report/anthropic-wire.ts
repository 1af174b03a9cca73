/**
 * Serialize a Pi transcript to the Anthropic Messages request body pi-ai would send
 * (re-implemented from pi-ai's `anthropic-messages` provider, whose `buildParams` /
 * `convertMessages` are not exported), keeping what matters for the prompt cache:
 * - tools (from the leading system message's `toolsAdded`), last tool marked;
 * - system: the leading system message's text, marked;
 * - messages: user text/images (empty text dropped), assistant text/thinking/tool_use
 *   (empty text dropped, unsigned thinking sent as text), consecutive tool results merged
 *   into one user message; later system messages are held until just before the next
 *   assistant message (pi-ai's placement);
 * - the last block of the last message is marked when that message is a user (or system) one.
 * Marks are `{type: "ephemeral"}`, or `{type: "ephemeral", ttl: "1h"}` for long retention.
 * Not modelled: OAuth Claude-Code identity block, effort markers, betas, `thinking` config.
 *
 * Recorded sessions made before Pi persisted its prompt carry no system message: pass
 * `unknownPrompt` and the tools and system become one placeholder tool and one placeholder
 * system block of the given sizes (the real prompt is unknown; its size is fitted).
 *
 * A message's wire blocks are built once per source block (a replay serializes the same
 * history for every request and every arm) and shared between the bodies: nothing may change
 * a block of a returned body in place (the last block's mark is set on a copy), which lets the
 * analyzer serialize each block once (`FlatBytesMemo`).
 */
import type { ImageContent, Message, SystemMessage, TextContent, Tool } from "@earendil-works/pi-ai";
import type {
  WireCacheControl,
  WireContentBlock,
  WireImageBlock,
  WireMessage,
  WireRequestBody,
  WireTextBlock,
  WireTool,
} from "../cache/wire-types.ts";
import { prepareTranscript, type TargetModel } from "./llm-transcript.ts";

export interface UnknownPrompt {
  /** Placeholder tool definition text (stands for every tool). */
  toolsText: string;
  /** Placeholder system prompt text. */
  systemText: string;
}

export interface WireSerializeOptions {
  model: TargetModel;
  cacheRetention?: "short" | "long" | "none";
  unknownPrompt?: UnknownPrompt;
}

const sanitize = (text: string) => text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "");

function imageBlock(image: ImageContent): WireImageBlock {
  return { type: "image", source: { type: "base64", media_type: image.mimeType, data: image.data } };
}

function toolResultContent(content: ReadonlyArray<TextContent | ImageContent>): string | Array<WireTextBlock | WireImageBlock> {
  if (!content.some((c) => c.type === "image")) return sanitize(content.map((c) => (c as TextContent).text).join("\n"));
  const blocks = content.map((c): WireTextBlock | WireImageBlock => (c.type === "text" ? { type: "text", text: sanitize(c.text) } : imageBlock(c)));
  if (!blocks.some((b) => b.type === "text")) blocks.unshift({ type: "text", text: "(see attached image)" });
  return blocks;
}

function systemText(m: SystemMessage): string {
  const content = typeof m.content === "string" ? m.content : m.content.map((b) => b.text).join("\n");
  const parts = [content, ...Object.values(m.sections ?? {}).filter((s): s is string => s !== null)];
  return parts.filter((p) => p.length > 0).join("\n\n");
}

function systemUpdateText(m: SystemMessage): string {
  const content = typeof m.content === "string" ? m.content : m.content.map((b) => b.text).join("\n");
  const parts = content.length > 0 ? [content] : [];
  for (const [name, value] of Object.entries(m.sections ?? {})) {
    parts.push(value === null ? `Removed system prompt section "${name}".` : `Updated system prompt section "${name}":\n\n${value}`);
  }
  return parts.join("\n\n");
}

const convertedTools = new WeakMap<Tool, WireTool>();
function convertTool(tool: Tool): WireTool {
  let wire = convertedTools.get(tool);
  if (!wire) {
    const schema = (tool.parameters ?? {}) as { properties?: unknown; required?: unknown };
    wire = { name: tool.name, description: tool.description, input_schema: { type: "object", properties: schema.properties ?? {}, required: schema.required ?? [] } };
    convertedTools.set(tool, wire);
  }
  return wire;
}

/** Wire blocks by the source object they were converted from (content blocks, tool results). */
const converted = new WeakMap<object, WireContentBlock>();
function once<T extends object>(source: T, make: (source: T) => WireContentBlock): WireContentBlock {
  let block = converted.get(source);
  if (!block) converted.set(source, (block = make(source)));
  return block;
}

function convertMessages(transcript: readonly Message[]): WireMessage[] {
  const out: WireMessage[] = [];
  const held: WireMessage[] = [];
  for (let i = 0; i < transcript.length; i++) {
    const msg = transcript[i];
    if (msg.role === "system") {
      const text = systemUpdateText(msg);
      if (text.length > 0) held.push({ role: "system", content: [{ type: "text", text: sanitize(text) }] });
    } else if (msg.role === "user") {
      if (typeof msg.content === "string") {
        if (msg.content.trim().length > 0) out.push({ role: "user", content: sanitize(msg.content) });
        continue;
      }
      const blocks = msg.content
        .map((c): WireContentBlock => once(c, (x) => (x.type === "text" ? { type: "text", text: sanitize(x.text) } : imageBlock(x))))
        .filter((b) => b.type !== "text" || b.text.trim().length > 0);
      if (blocks.length > 0) out.push({ role: "user", content: blocks });
    } else if (msg.role === "assistant") {
      const blocks: WireContentBlock[] = [];
      for (const b of msg.content) {
        if (b.type === "text") {
          if (b.text.trim().length > 0) blocks.push(once(b, (x) => ({ type: "text", text: sanitize(x.text) })));
        } else if (b.type === "thinking") {
          if (b.redacted) blocks.push(once(b, (x) => ({ type: "redacted_thinking", data: x.thinkingSignature ?? "" })));
          else if (b.thinkingSignature && b.thinkingSignature.trim().length > 0) blocks.push(once(b, (x) => ({ type: "thinking", thinking: sanitize(x.thinking), signature: x.thinkingSignature! })));
          else if (b.thinking.trim().length > 0) blocks.push(once(b, (x) => ({ type: "text", text: sanitize(x.thinking) })));
        } else if (b.type === "toolCall") {
          blocks.push(once(b, (x) => ({ type: "tool_use", id: x.id, name: x.name, input: x.arguments ?? {} })));
        }
      }
      if (blocks.length === 0) continue;
      out.push(...held.splice(0));
      out.push({ role: "assistant", content: blocks });
    } else if (msg.role === "toolResult") {
      const results: WireContentBlock[] = [];
      while (i < transcript.length && transcript[i].role === "toolResult") {
        const r = transcript[i] as Extract<Message, { role: "toolResult" }>;
        results.push(once(r, (x) => ({ type: "tool_result", tool_use_id: x.toolCallId, content: toolResultContent(x.content), is_error: x.isError })));
        i++;
      }
      i--;
      out.push({ role: "user", content: results });
    }
  }
  out.push(...held);
  return out;
}

function markLastMessage(messages: WireMessage[], mark: WireCacheControl): void {
  const last = messages[messages.length - 1];
  if (!last || (last.role !== "user" && last.role !== "system")) return;
  if (typeof last.content === "string") {
    last.content = [{ type: "text", text: last.content, cache_control: mark }];
    return;
  }
  const at = last.content.length - 1;
  const block = last.content[at] as WireContentBlock | undefined;
  // A copy: the block itself may be shared with other requests' bodies.
  if (block && (block.type === "text" || block.type === "image" || block.type === "tool_result")) last.content[at] = { ...block, cache_control: mark };
}

export function serializeForAnthropic(messages: readonly Message[], options: WireSerializeOptions): WireRequestBody {
  const retention = options.cacheRetention ?? "short";
  const mark: WireCacheControl | undefined = retention === "none" ? undefined : retention === "long" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const transcript = prepareTranscript(messages, options.model);
  const leading = transcript[0]?.role === "system" ? (transcript[0] as SystemMessage) : undefined;
  const conversation = leading ? transcript.slice(1) : transcript;
  const wireMessages = convertMessages(conversation);
  if (mark) markLastMessage(wireMessages, mark);

  const withMark = <T extends object>(x: T): T => (mark ? { ...x, cache_control: mark } : x);
  let tools: WireTool[] = (leading?.toolsAdded ?? []).map(convertTool);
  let system = leading ? systemText(leading) : "";
  if (!leading && options.unknownPrompt) {
    tools = [{ name: "unknown_tools_placeholder", description: options.unknownPrompt.toolsText, input_schema: { type: "object", properties: {}, required: [] } }];
    system = options.unknownPrompt.systemText;
  }
  const body: WireRequestBody = { model: options.model.id, messages: wireMessages };
  if (tools.length > 0) body.tools = tools.map((t, i) => (i === tools.length - 1 ? withMark(t) : t));
  if (system.length > 0) body.system = [withMark({ type: "text" as const, text: sanitize(system) })];
  return body;
}
