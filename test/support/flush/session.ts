/** A three-prompt session used by the flush tests (timestamps are the message ids). */
import type { ContextMessage } from "../../../src/session/messages.ts";
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../../../src/prune/config.ts";
import type { BatchSummary } from "../../../src/summarize/batch.ts";
import { assistant, call, result, text, user } from "../message-factory.ts";

export const FILE_A = "line of a.ts\n".repeat(160); // 13 * 160 = 2080 chars
export const FILE_C = "c".repeat(1500);

export const flushConfig: PruneConfig = {
  ...DEFAULT_PRUNE_CONFIG,
  minBatchChars: 1000,
  protectedPaths: [".env"],
  errorPurge: { enabled: true, cooldownTurns: 2 },
  chainCompression: { enabled: true, rollingWindow: 1 },
};

export function branch(): ContextMessage[] {
  return [
    user("p1", 1),
    assistant([call("a", "read", { path: "a.ts" }), call("env", "read", { path: "secrets/.env" }), call("ls", "bash", { command: "ls" })], 10),
    result("a", "read", FILE_A, 11),
    result("env", "read", "KEY=1", 12),
    result("ls", "bash", "a.ts\n", 13),
    assistant([text("done 1")], 14),
    user("p2", 20),
    assistant([call("e", "edit", { path: "b.ts", oldText: "zzz" })], 21),
    result("e", "edit", "oldText not found", 22, true),
    assistant([call("b", "read", { path: "b.ts" })], 23),
    result("b", "read", "tiny", 24),
    assistant([text("done 2")], 25),
    user("p3", 30),
    assistant([call("a2", "read", { path: "a.ts" })], 31),
    result("a2", "read", FILE_A, 32),
    assistant([call("c", "read", { path: "c.ts" })], 33),
    result("c", "read", FILE_C, 34),
  ];
}

export const closing = assistant([text("done 3")], 35);

export function summary(batchKey: string, text: string, source: BatchSummary["source"] = "model"): BatchSummary {
  return { batchKey, text, source, inputTokens: 100, outputTokens: 20, cost: 0.01 };
}
