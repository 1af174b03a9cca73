import { describe, expect, test } from "bun:test";
import { CUSTOM_TYPE_RECALL, recallDelta, restoreRecallIndex } from "./recall-entries.ts";
import { emptyRecallIndex, recordOriginals } from "./recall-index.ts";
import type { CapturedCall } from "../summarize/batch.ts";

const call = (id: string, text: string, ts: number): CapturedCall => ({
  occurrenceKey: `${id}@${ts}#0`,
  toolCallId: id,
  toolName: "bash",
  arguments: { command: "ls" },
  resultText: text,
  isError: false,
  assistantTimestamp: ts,
  resultTimestamp: ts + 1,
});

describe("recall index persistence", () => {
  test("deltas round-trip through custom entries with every field, merged in order", () => {
    const first = recordOriginals(emptyRecallIndex(), {
      calls: [call("a", "x".repeat(100), 1)],
      spill: { thresholdBytes: 50, pathFor: (_c, sha) => `/s/${sha}.txt` },
    }).index;
    const second = recordOriginals(first, { calls: [call("a", "y", 1), call("b", "z", 5)] }).index;
    const d1 = recallDelta(emptyRecallIndex(), first)!;
    const d2 = recallDelta(first, second)!;
    expect(Object.keys(d2.entries)).toEqual(["b@5#0"]);
    expect(recallDelta(second, second)).toBeUndefined();
    const entries = [
      { type: "custom", customType: CUSTOM_TYPE_RECALL, data: JSON.parse(JSON.stringify(d1)) },
      { type: "message" },
      { type: "custom", customType: CUSTOM_TYPE_RECALL, data: JSON.parse(JSON.stringify(d2)) },
    ];
    const restored = restoreRecallIndex(entries);
    expect(restored.diagnostics).toEqual([]);
    expect(restored.index).toEqual(second);
    expect(restored.index.entries["a@1#0"]!.spillPath).toMatch(/^\/s\//);
    expect(restored.index.entries["a@1#0"]!.preview).toBe("x".repeat(100));
  });

  test("a corrupt entry is skipped with one diagnostic", () => {
    const restored = restoreRecallIndex([{ type: "custom", customType: CUSTOM_TYPE_RECALL, id: "e1", data: { version: 9 } }]);
    expect(restored.index.entries).toEqual({});
    expect(restored.diagnostics).toHaveLength(1);
    expect(restored.diagnostics[0]).toContain("e1");
  });
});
