/**
 * Tool-use / tool-result pairing checks over a wire message list, as Anthropic enforces them:
 * every `tool_use` must be answered by a `tool_result` in the very next (user) message, every
 * `tool_result` must answer a `tool_use` of the message right before it, ids are unique.
 */
import type { WireMessage } from "./wire-types.ts";

export type PairingViolationKind = "missing_result" | "orphan_result" | "duplicate_tool_use_id" | "duplicate_tool_result_id";

export interface PairingViolation {
  kind: PairingViolationKind;
  id: string;
  /** Index into `body.messages` of the offending block's message. */
  messageIndex: number;
}

function blocksOf(message: WireMessage | undefined): Array<Record<string, unknown>> {
  if (!message || !Array.isArray(message.content)) return [];
  return message.content as Array<Record<string, unknown>>;
}

function idsOf(message: WireMessage | undefined, type: "tool_use" | "tool_result"): string[] {
  const key = type === "tool_use" ? "id" : "tool_use_id";
  return blocksOf(message)
    .filter((b) => b.type === type)
    .map((b) => String(b[key]));
}

export function findPairingViolations(messages: readonly WireMessage[]): PairingViolation[] {
  const out: PairingViolation[] = [];
  const seenUse = new Set<string>();
  const seenResult = new Set<string>();
  messages.forEach((message, mi) => {
    for (const id of idsOf(message, "tool_use")) {
      if (seenUse.has(id)) out.push({ kind: "duplicate_tool_use_id", id, messageIndex: mi });
      seenUse.add(id);
    }
    for (const id of idsOf(message, "tool_result")) {
      if (seenResult.has(id)) out.push({ kind: "duplicate_tool_result_id", id, messageIndex: mi });
      seenResult.add(id);
    }
    if (message.role === "assistant") {
      const next = messages[mi + 1];
      const answered = new Set(next?.role === "user" ? idsOf(next, "tool_result") : []);
      for (const id of idsOf(message, "tool_use")) {
        // A trailing assistant message (prefill) has no next message yet: not a violation.
        if (next !== undefined && !answered.has(id)) out.push({ kind: "missing_result", id, messageIndex: mi });
      }
    }
    if (message.role === "user") {
      const prev = messages[mi - 1];
      const asked = new Set(prev?.role === "assistant" ? idsOf(prev, "tool_use") : []);
      for (const id of idsOf(message, "tool_result")) {
        if (!asked.has(id)) out.push({ kind: "orphan_result", id, messageIndex: mi });
      }
    }
  });
  return out;
}
