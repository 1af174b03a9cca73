import { describe, expect, test } from "bun:test";
import { NO_UNAPPLIED_SPEND } from "../compaction/spend-entry.ts";
import { keeperRecordingOf } from "./recorded-with.ts";

describe("keeperRecordingOf", () => {
  const header = { type: "session", version: 3, id: "s" };
  const message = { type: "message", id: "m", message: { role: "user", content: "hi" } };
  test("no keeper entry: recorded without the keeper", () => {
    expect(keeperRecordingOf([header, message, { type: "custom", customType: "other-extension/x", data: {} }])).toEqual({ recordedWith: "bare", keeperEntries: 0, summarizerUsd: 0, unappliedCompaction: NO_UNAPPLIED_SPEND });
  });
  test("any context-keeper/ custom entry: recorded with it; the largest running summarizer total is taken (flush entries and the older stats entries)", () => {
    const entries = [
      header,
      message,
      { type: "custom", customType: "context-keeper/flush", data: { version: 2, summaries: [], stats: { summarizerCost: 0.01 } } },
      { type: "custom", customType: "context-keeper/recall", data: {} },
      { type: "custom", customType: "context-keeper/stats", data: { summarizerCost: 0.03 } },
      { type: "custom", customType: "context-keeper/flush", data: { version: 2, summaries: [], stats: { summarizerCost: "bad" } } },
      // A custom_message is something else (an extension's message in the context), not a keeper entry.
      { type: "custom_message", customType: "context-keeper/flush", content: "x" },
    ];
    expect(keeperRecordingOf(entries)).toEqual({ recordedWith: "keeper", keeperEntries: 4, summarizerUsd: 0.03, unappliedCompaction: NO_UNAPPLIED_SPEND });
  });
});
