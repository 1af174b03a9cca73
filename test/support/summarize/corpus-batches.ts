/** Tool batches of the recorded session, built the way capture builds them (for tests only). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type CapturedCall, type ToolBatch, occurrenceKey } from "../../../src/summarize/batch.ts";
import { type ContextMessage, isAssistant, isToolResult, toolCallsOf, toolResultText } from "../../../src/session/messages.ts";

export const CORPUS_PATH = join(import.meta.dir, "../../../corpus/large-session.jsonl");

export function corpusMessages(): ContextMessage[] {
  return readFileSync(CORPUS_PATH, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { type: string; message?: ContextMessage })
    .filter((e) => e.type === "message" && e.message !== undefined)
    .map((e) => e.message as ContextMessage);
}

export function batchesOf(messages: ContextMessage[]): ToolBatch[] {
  const batches: ToolBatch[] = [];
  messages.forEach((m, i) => {
    if (!isAssistant(m)) return;
    const calls = toolCallsOf(m);
    if (calls.length === 0) return;
    const captured: CapturedCall[] = [];
    calls.forEach((c, k) => {
      const r = messages.slice(i + 1).find((x) => isToolResult(x) && x.toolCallId === c.id);
      if (!r || !isToolResult(r)) return;
      captured.push({
        occurrenceKey: occurrenceKey(c.id, m.timestamp, k),
        toolCallId: c.id,
        toolName: c.name,
        arguments: c.arguments as Record<string, unknown>,
        resultText: toolResultText(r),
        isError: r.isError,
        assistantTimestamp: m.timestamp,
        resultTimestamp: r.timestamp,
      });
    });
    if (captured.length > 0) batches.push({ batchKey: captured[0].occurrenceKey, assistantTimestamp: m.timestamp, calls: captured });
  });
  return batches;
}
