/**
 * The engine's side of two reliability rules: a flush whose capture lost calls to a compaction
 * (applied while the summarizer ran) captures again over the branch it plans on; a flush whose
 * spill files could not be written commits its recall index and delta entry without them.
 */
import { describe, expect, test } from "bun:test";
import type { FlushRecord } from "../state/schema.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { summarizeExtractively } from "../summarize/extractive.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { withoutSpillFailures } from "./flush.ts";
import { captureStillLive, completeFlush, initialEngineState, startFlush } from "./session.ts";

const SETTINGS: KeeperSettings = {
  ...DEFAULT_SETTINGS,
  pruning: { ...DEFAULT_SETTINGS.pruning, minBatchChars: 100 },
  cache: { ...DEFAULT_SETTINGS.cache, discipline: false },
  recall: { ...DEFAULT_SETTINGS.recall, spillThresholdBytes: 1000 },
};
const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const out = (name: string) => `${name} output line\n`.repeat(100);
const prompt1: ContextMessage[] = [user("p1", 10), assistant([call("a", "read", { path: "a.ts" })], 11), result("a", "read", out("a"), 12), assistant([text("done 1")], 13)];
const prompt2: ContextMessage[] = [user("p2", 20), assistant([call("b", "read", { path: "b.ts" })], 21), result("b", "read", out("b"), 22), assistant([text("done 2")], 23)];
const base = { settings: SETTINGS, model: MODEL, now: 1, facts: undefined, label: "flush 1 (manual)" };

describe("a flush after a compaction took part of its capture", () => {
  test("the capture is taken again over the branch now: no summary and no stub for calls that left it", () => {
    const begun = startFlush(initialEngineState(), { ...base, branchMessages: [...prompt1, ...prompt2] });
    expect(begun.capture.batches.map((b) => b.batchKey)).toEqual(["batch:a@11", "batch:b@21"]);
    const summaries = begun.capture.batches.map((b) => summarizeExtractively(b));
    expect(captureStillLive(begun.capture, [...prompt1, ...prompt2])).toBe(true);
    expect(captureStillLive(begun.capture, prompt2)).toBe(false);
    const { result: after } = completeFlush(begun.state, { ...base, branchMessages: prompt2, capture: begun.capture, summaries });
    expect(after.nextState.frontier.stubbedKeys).toEqual(["b@21#0"]);
    expect(Object.keys(after.nextState.summaries)).toEqual(["batch:b@21"]);
    expect(after.decisions).toContainEqual({ kind: "unknown-summary", batchKey: "batch:a@11" });
  });
});

describe("a flush whose spill files could not be written", () => {
  const flush = () => {
    const branch = [...prompt1, ...prompt2];
    const begun = startFlush(initialEngineState(), { ...base, branchMessages: branch });
    return completeFlush(begun.state, {
      ...base,
      branchMessages: branch,
      capture: begun.capture,
      summaries: begun.capture.batches.map((b) => summarizeExtractively(b)),
      recall: { spill: { thresholdBytes: 1000, pathFor: (c) => `/spill/${c.occurrenceKey}.txt` } },
    }).result;
  };

  test("the failed spill leaves the index and the delta entry, the written one stays; nothing else changes", () => {
    const planned = flush();
    expect(planned.spills.map((s) => s.path).sort()).toEqual(["/spill/a@11#0.txt", "/spill/b@21#0.txt"]);
    const committed = withoutSpillFailures(planned, [{ path: "/spill/a@11#0.txt", error: "EACCES" }]);
    // One flush entry: its recall delta loses the failed side file, nothing else in it changes.
    expect(committed.entries).toHaveLength(1);
    const delta = (committed.entries[0]!.data as FlushRecord).recall!;
    for (const index of [committed.nextRecall!, delta]) {
      expect(index.entries["a@11#0"]!.spillPath).toBeUndefined();
      expect(index.entries["a@11#0"]!.sha256).toBe(planned.nextRecall!.entries["a@11#0"]!.sha256);
      expect(index.entries["b@21#0"]!.spillPath).toBe("/spill/b@21#0.txt");
    }
    expect(committed.spills.map((s) => s.path)).toEqual(["/spill/b@21#0.txt"]);
    expect({ ...(committed.entries[0]!.data as FlushRecord), recall: undefined }).toEqual({ ...(planned.entries[0]!.data as FlushRecord), recall: undefined });
    expect(committed.nextState).toBe(planned.nextState);
  });

  test("no failure: the same result", () => {
    const planned = flush();
    expect(withoutSpillFailures(planned, [])).toBe(planned);
  });
});
