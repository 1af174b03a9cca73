/**
 * Recall when the index cannot answer (issue #14): entries missing, or one field wrong in
 * one occurrence. The ref (`<toolCallId>@<assistant timestamp>#<n>`) finds the original on
 * the branch; when nothing can, the answer says why.
 */
import { describe, expect, test } from "bun:test";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, user } from "../../test/support/message-factory.ts";
import { CUSTOM_TYPE_RECALL, recallDelta, restoreRecallIndex } from "./recall-entries.ts";
import { emptyRecallIndex, recordOriginals } from "./recall-index.ts";
import { findResultByRef } from "./original-source.ts";
import { executeRecall } from "./tool.ts";

const OUT_A = "alpha output ✓\n".repeat(40);
const OUT_B = "beta output 🚀\n".repeat(40);
const OUT_C = "gamma output\n".repeat(40);

/** Two tool turns: A alone at t=100, then B and C (same id as A: providers reuse ids) at t=200. */
const branch: ContextMessage[] = [
  user("go", 50),
  assistant([call("toolu_a", "read", { path: "a" })], 100),
  result("toolu_a", "read", OUT_A, 101),
  assistant([call("toolu_b", "bash", { command: "b" }), call("toolu_a", "read", { path: "c" })], 200),
  result("toolu_b", "bash", OUT_B, 201),
  result("toolu_a", "read", OUT_C, 202),
  assistant([{ type: "text", text: "done" }], 300),
];

const capturedOf = (key: string, toolCallId: string, toolName: string, text: string, ts: number, resultTs: number) => ({
  occurrenceKey: key, toolCallId, toolName, arguments: {}, resultText: text, isError: false, assistantTimestamp: ts, resultTimestamp: resultTs,
});
const full = recordOriginals(emptyRecallIndex(), {
  calls: [
    capturedOf("toolu_a@100#0", "toolu_a", "read", OUT_A, 100, 101),
    capturedOf("toolu_b@200#0", "toolu_b", "bash", OUT_B, 200, 201),
    capturedOf("toolu_a@200#0", "toolu_a", "read", OUT_C, 200, 202),
  ],
}).index;

const body = (r: { text: string; details: { bodyStart?: number } }) => r.text.slice(r.details.bodyStart);

describe("findResultByRef", () => {
  test("a ref finds its own result among reused ids", () => {
    expect(findResultByRef(branch, "toolu_a@100#0")).toMatchObject({ ok: true, text: OUT_A, toolName: "read" });
    expect(findResultByRef(branch, "toolu_a@200#0")).toMatchObject({ ok: true, text: OUT_C });
    expect(findResultByRef(branch, "toolu_b@200#0")).toMatchObject({ ok: true, text: OUT_B, toolName: "bash" });
  });

  test("each way of not finding it is named", () => {
    expect(findResultByRef(branch, "not a ref")).toEqual({ ok: false, reason: expect.stringContaining("not a ref") });
    expect(findResultByRef(branch, "toolu_a@999#0")).toEqual({ ok: false, reason: expect.stringContaining("no assistant message at 999") });
    expect(findResultByRef(branch, "toolu_zz@200#0")).toEqual({ ok: false, reason: expect.stringContaining('does not call "toolu_zz"') });
    expect(findResultByRef(branch, "toolu_a@200#1")).toEqual({ ok: false, reason: expect.stringContaining("1 call(s)") });
    const unanswered = branch.slice(0, 4);
    expect(findResultByRef(unanswered, "toolu_b@200#0")).toEqual({ ok: false, reason: expect.stringContaining("no result") });
  });
});

describe("keeper_recall falls back to the branch", () => {
  test("with no recall entries at all, every ref still comes back byte-exact, from the branch", async () => {
    for (const [ref, text] of [["toolu_a@100#0", OUT_A], ["toolu_b@200#0", OUT_B], ["toolu_a@200#0", OUT_C]] as const) {
      const r = await executeRecall({ params: { ref }, store: emptyRecallIndex(), branchMessages: branch });
      expect(r.isError).toBe(false);
      expect(r.details.source).toBe("branch");
      expect(body(r)).toBe(text);
    }
  });

  test("an entry with a wrong field (sha256) is served from the branch by its ref", async () => {
    const damaged = { version: 1 as const, entries: { ...full.entries, "toolu_b@200#0": { ...full.entries["toolu_b@200#0"]!, sha256: "0".repeat(64) } } };
    const r = await executeRecall({ params: { ref: "toolu_b@200#0" }, store: damaged, branchMessages: branch });
    expect(r.isError).toBe(false);
    expect(r.details.source).toBe("branch");
    expect(body(r)).toBe(OUT_B);
  });

  test("nowhere to be found: the error says why, for the index and for the branch", async () => {
    const r = await executeRecall({ params: { ref: "toolu_a@999#0" }, store: full, branchMessages: branch });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('No pruned output has ref or tool-call id "toolu_a@999#0"');
    expect(r.text).toContain("not in the recall index (3 entries)");
    expect(r.text).toContain("no assistant message at 999");
    const gone = await executeRecall({ params: { ref: "toolu_b@200#0" }, store: full, branchMessages: branch.slice(0, 3) });
    expect(gone.isError).toBe(true);
    expect(gone.details.status).toBe("unavailable");
    expect(gone.text).toContain("not on the current branch of this session and was not spilled");
    expect(gone.text).toContain("no assistant message at 200");
  });
});

describe("recall entries are validated per occurrence", () => {
  test("one wrong field in one occurrence skips that occurrence only, with one diagnostic naming it", () => {
    const data = JSON.parse(JSON.stringify(recallDelta(emptyRecallIndex(), full)));
    data.entries["toolu_b@200#0"].bytes = "many";
    const restored = restoreRecallIndex([{ type: "custom", customType: CUSTOM_TYPE_RECALL, id: "r1", data }]);
    expect(Object.keys(restored.index.entries).sort()).toEqual(["toolu_a@100#0", "toolu_a@200#0"]);
    expect(restored.index.entries["toolu_a@100#0"]).toEqual(full.entries["toolu_a@100#0"]!);
    expect(restored.diagnostics).toHaveLength(1);
    expect(restored.diagnostics[0]).toContain("r1");
    expect(restored.diagnostics[0]).toContain("toolu_b@200#0");
    expect(restored.diagnostics[0]).toContain("bytes");
    expect(restored.diagnostics[0]).toContain("kept 2");
  });

  test("an occurrence filed under another key is skipped (its ref would point at the wrong original)", () => {
    const data = JSON.parse(JSON.stringify(recallDelta(emptyRecallIndex(), full)));
    data.entries["toolu_a@100#0"].occurrenceKey = "toolu_a@200#0";
    const restored = restoreRecallIndex([{ type: "custom", customType: CUSTOM_TYPE_RECALL, id: "r2", data }]);
    expect(Object.keys(restored.index.entries).sort()).toEqual(["toolu_a@200#0", "toolu_b@200#0"]);
    expect(restored.diagnostics[0]).toContain("filed under toolu_a@100#0");
  });

  test("an entry from a newer format is skipped whole, saying which version", () => {
    const restored = restoreRecallIndex([{ type: "custom", customType: CUSTOM_TYPE_RECALL, id: "r3", data: { version: 2, entries: {} } }]);
    expect(restored.index.entries).toEqual({});
    expect(restored.diagnostics).toEqual([expect.stringContaining("version 2")]);
  });
});
