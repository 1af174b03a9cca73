/**
 * The provider-independent clean-up pi-ai applies to a transcript before converting it for
 * Anthropic (re-implemented from pi-ai's `transformMessages`, which is not exported):
 * - assistant messages that ended in `error` or `aborted` are skipped;
 * - thinking from a different model is dropped; a same-model unsigned, empty thinking block too;
 * - tool-call ids of other models are normalized to Anthropic's `[a-zA-Z0-9_-]{1,64}`,
 *   and their results follow the new id;
 * - tool calls left without a result get a synthetic error result "No result provided"
 *   (inserted before the next assistant or user message, or at the end).
 * Images are kept (the recorded models all accept images).
 */
import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from "@earendil-works/pi-ai";

export interface TargetModel {
  provider: string;
  api: string;
  id: string;
}

export function normalizeToolCallId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}

function isSameModel(m: AssistantMessage, model: TargetModel): boolean {
  return m.provider === model.provider && m.api === model.api && m.model === model.id;
}

function cleanAssistant(m: AssistantMessage, model: TargetModel, idMap: Map<string, string>): AssistantMessage {
  const same = isSameModel(m, model);
  const content = (m.content ?? []).flatMap((block): AssistantMessage["content"] => {
    if (block.type === "thinking") {
      if (!same) return [];
      if (block.redacted || block.thinkingSignature) return [block];
      return block.thinking && block.thinking.trim() !== "" ? [block] : [];
    }
    if (block.type === "text") return [same ? block : { type: "text", text: block.text }];
    if (block.type === "toolCall" && !same) {
      const { thoughtSignature: _drop, ...rest } = block as ToolCall & { thoughtSignature?: string };
      const id = normalizeToolCallId(block.id);
      if (id !== block.id) idMap.set(block.id, id);
      return [{ ...rest, id } as ToolCall];
    }
    return [block];
  });
  return { ...m, content };
}

export function prepareTranscript(messages: readonly Message[], model: TargetModel): Message[] {
  const idMap = new Map<string, string>();
  const cleaned = messages.map((msg): Message => {
    const m = (msg.content == null ? { ...msg, content: [] } : msg) as Message;
    if (m.role === "assistant") return cleanAssistant(m, model, idMap);
    if (m.role === "toolResult") {
      const id = idMap.get(m.toolCallId);
      return id && id !== m.toolCallId ? { ...m, toolCallId: id } : m;
    }
    return m;
  });

  const out: Message[] = [];
  let pending: ToolCall[] = [];
  let answered = new Set<string>();
  const held: Message[] = [];
  const close = () => {
    for (const call of pending) {
      if (answered.has(call.id)) continue;
      const synthetic: ToolResultMessage = {
        role: "toolResult",
        toolCallId: call.id,
        toolName: call.name,
        content: [{ type: "text", text: "No result provided" }],
        isError: true,
        timestamp: 0,
      };
      out.push(synthetic);
    }
    pending = [];
    answered = new Set();
    out.push(...held);
    held.length = 0;
  };
  for (const m of cleaned) {
    if (m.role === "assistant") {
      close();
      if (m.stopReason === "error" || m.stopReason === "aborted") continue;
      const calls = m.content.filter((b): b is ToolCall => b.type === "toolCall");
      if (calls.length > 0) {
        pending = calls;
        answered = new Set();
      }
      out.push(m);
    } else if (m.role === "toolResult") {
      answered.add(m.toolCallId);
      out.push(m);
    } else if (m.role === "system") {
      if (pending.length > 0) held.push(m);
      else out.push(m);
    } else {
      close();
      out.push(m);
    }
  }
  close();
  return out;
}
