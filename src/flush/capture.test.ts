import { describe, expect, test } from "bun:test";
import { captureBatches, withClosingMessage } from "./capture.ts";
import { contentHash } from "./content-hash.ts";
import { emptyState } from "../state/schema.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { FILE_A, FILE_C, branch, closing, flushConfig, summary } from "../../test/support/flush/session.ts";
import { planFlush } from "./plan.ts";

describe("captureBatches", () => {
  test("finished, non-trivial batches minus protected calls", () => {
    const r = captureBatches({ branchMessages: branch(), closingMessage: closing, state: emptyState(), config: flushConfig });
    expect(r.batches.map((b) => b.batchKey)).toEqual(["batch:a@10", "batch:a2@31", "batch:c@33"]);
    const first = r.batches[0];
    // the .env read is protected; `ls` stays in the batch: 2080 + 5 >= 1000
    expect(first.calls.map((c) => c.occurrenceKey)).toEqual(["a@10#0", "ls@10#0"]);
    expect(first.calls[0]).toEqual({
      occurrenceKey: "a@10#0",
      toolCallId: "a",
      toolName: "read",
      arguments: { path: "a.ts" },
      resultText: FILE_A,
      isError: false,
      assistantTimestamp: 10,
      resultTimestamp: 11,
    });
    expect(r.batches[2].calls[0].resultText).toBe(FILE_C);
    expect(r.skipped).toEqual([
      { batchKey: "batch:e@21", reason: "trivial" },
      { batchKey: "batch:b@23", reason: "trivial" },
    ]);
    expect(r.duplicates).toEqual([]);
  });

  test("at a mid-loop flush the batch the model has not answered yet is not captured (unseen)", () => {
    const msgs = [user("p", 1), assistant([call("x", "read")], 2), result("x", "read", "X".repeat(5000), 3)];
    const midLoop = captureBatches({ branchMessages: msgs, state: emptyState(), config: flushConfig });
    expect(midLoop.batches).toEqual([]);
    expect(midLoop.skipped).toEqual([{ batchKey: "batch:x@2", reason: "unseen" }]);
    // its duplicates are not aliased either
    const dup = [user("p", 1), assistant([call("a", "read")], 2), result("a", "read", "D".repeat(5000), 3), assistant([call("b", "read")], 4), result("b", "read", "D".repeat(5000), 5)];
    const seen = [...dup.slice(0, 3), assistant([call("b", "read")], 4)];
    const first = captureBatches({ branchMessages: seen, state: emptyState(), config: flushConfig });
    expect(first.batches.map((b) => b.batchKey)).toEqual(["batch:a@2"]);
    const planned = planFlush({ state: emptyState(), branchMessages: seen, summaries: [summary("batch:a@2", "D lines")], config: flushConfig, now: 10 });
    const again = captureBatches({ branchMessages: dup, state: planned.nextState, config: flushConfig });
    expect(again.duplicates).toEqual([]);
    expect(again.skipped).toEqual([{ batchKey: "batch:b@4", reason: "unseen" }]);
    // once answered, b's identical output is aliased to a's summary
    const later = captureBatches({ branchMessages: [...dup, assistant([text("ok")], 6)], state: planned.nextState, config: flushConfig });
    expect(later.duplicates.map((d) => d.occurrenceKey)).toEqual(["b@4#0"]);
    const answered = captureBatches({ branchMessages: [...msgs, assistant([call("y", "read")], 4)], state: emptyState(), config: flushConfig });
    expect(answered.batches.map((b) => b.batchKey)).toEqual(["batch:x@2"]);
  });

  test("unfinished batches (a result missing) are not captured", () => {
    const msgs = [user("p", 1), assistant([call("x", "read"), call("y", "read")], 2), result("x", "read", "X".repeat(5000), 3)];
    const r = captureBatches({ branchMessages: msgs, state: emptyState(), config: flushConfig });
    expect(r.batches).toEqual([]);
    expect(r.skipped).toEqual([{ batchKey: "batch:x@2", reason: "unfinished" }]);
  });

  test("a batch with only protected calls is skipped as protected; protected tool names too", () => {
    const msgs = [user("p", 1), assistant([call("k", "todo", { item: "r" })], 2), result("k", "todo", "X".repeat(5000), 3), assistant([text("ok")], 4)];
    const r = captureBatches({ branchMessages: msgs, state: emptyState(), config: { ...flushConfig, protectedTools: ["todo"] } });
    expect(r.batches).toEqual([]);
    expect(r.skipped).toEqual([{ batchKey: "batch:k@2", reason: "protected" }]);
  });

  test("a keeper_recall output is a copy: never captured, even beside other calls (whose batch is)", () => {
    const recallOnly = [user("p", 1), assistant([call("k", "keeper_recall", { ref: "r" })], 2), result("k", "keeper_recall", "X".repeat(5000), 3), assistant([text("ok")], 4)];
    const r = captureBatches({ branchMessages: recallOnly, state: emptyState(), config: flushConfig });
    expect(r.batches).toEqual([]);
    expect(r.skipped).toEqual([{ batchKey: "batch:k@2", reason: "recall" }]);
    const mixed = [user("p", 1), assistant([call("k", "keeper_recall", { ref: "r" }), call("b", "read", { path: "b.ts" })], 2), result("k", "keeper_recall", "X".repeat(5000), 3), result("b", "read", "Y".repeat(3000), 3), assistant([text("ok")], 4)];
    const m = captureBatches({ branchMessages: mixed, state: emptyState(), config: flushConfig });
    expect(m.batches.map((b) => b.calls.map((c) => c.occurrenceKey))).toEqual([["b@2#0"]]);
  });

  test("batches with a summary are not captured again; identical outputs of summarized ones become duplicates", () => {
    const plan = planFlush({
      state: emptyState(),
      branchMessages: branch().slice(0, 12),
      summaries: [summary("batch:a@10", "a.ts holds lines")],
      config: flushConfig,
      now: 1000,
    });
    // A request-end flush: the closing answer means the model has seen c's output.
    const closingMessage = assistant([text("done")], 99);
    const r = captureBatches({ branchMessages: branch(), closingMessage, state: plan.nextState, config: flushConfig });
    expect(r.batches.map((b) => b.batchKey)).toEqual(["batch:c@33"]);
    expect(r.duplicates).toEqual([{ occurrenceKey: "a2@31#0", aliasOf: "a@10#0", batchKey: "batch:a2@31" }]);
    expect(r.skipped).toContainEqual({ batchKey: "batch:a2@31", reason: "duplicates-only" });
    expect(plan.nextState.summaries["batch:a@10"].outputHashes["a@10#0"]).toBe(contentHash(FILE_A));
  });

  test("disabled config captures nothing", () => {
    expect(captureBatches({ branchMessages: branch(), state: emptyState(), config: { ...flushConfig, enabled: false } }).batches).toEqual([]);
  });

  test("withClosingMessage appends only a message the branch does not end with", () => {
    const b = branch();
    expect(withClosingMessage(b, closing).length).toBe(b.length + 1);
    expect(withClosingMessage([...b, closing], { ...closing }).length).toBe(b.length + 1);
    expect(withClosingMessage(b).length).toBe(b.length);
    expect(withClosingMessage([user("x", 1)], assistant([text("y")], 1)).length).toBe(2);
  });
});

describe("contentHash", () => {
  test("equal text, equal hash; different text or length, different hash", () => {
    expect(contentHash(FILE_A)).toBe(contentHash(`${FILE_A}`));
    expect(contentHash("abc")).not.toBe(contentHash("abd"));
    expect(contentHash("abc").endsWith(":3")).toBe(true);
  });
});
