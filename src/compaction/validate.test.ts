import { describe, expect, test } from "bun:test";
import type { JobSnapshot } from "./job-reducer.ts";
import { APPLY_CHECKS, validateBranchAnchors, validateReadyJob, type ValidationInput } from "./validate.ts";

const snapshot: JobSnapshot = {
  jobId: "j1",
  sessionId: "s1",
  snapshotLeafId: "e5",
  firstKeptEntryId: "e3",
  modelKey: "anthropic/claude",
  thinkingLevel: "high",
  settingsKey: "16384/20000",
  promptVersion: "pi-1",
  adapterId: "default",
  manual: false,
  startedAt: 0,
};

const branch = ["e1", "e2", "e3", "e4", "e5", "e6"].map((id) => ({ id, isToolResult: id === "e4" }));

function valid(): ValidationInput {
  return {
    snapshot,
    result: { firstKeptEntryId: "e3", summary: "sum" },
    current: { sessionId: "s1", modelKey: "anthropic/claude", thinkingLevel: "high", settingsKey: "16384/20000", branch },
    // window 100_000 - reserve 16_384 = 83_616: the largest preview that still fits.
    previewTokens: 83_616,
    contextWindow: 100_000,
    reserveTokens: 16_384,
  };
}

const cases: [string, (i: ValidationInput) => void, string][] = [
  ["1 custom instructions", (i) => (i.current.customInstructions = "focus on tests"), "custom_instructions"],
  ["2 session id", (i) => (i.current.sessionId = "s2"), "session_changed"],
  ["3 model", (i) => (i.current.modelKey = "openai/gpt"), "model_changed"],
  ["4 thinking level", (i) => (i.current.thinkingLevel = "low"), "thinking_changed"],
  ["5 settings", (i) => (i.current.settingsKey = "8000/20000"), "settings_changed"],
  ["6 result first kept", (i) => (i.result = { ...i.result, firstKeptEntryId: "e2" }), "first_kept_mismatch"],
  ["7 first kept on branch", (i) => (i.current.branch = branch.filter((e) => e.id !== "e3")), "first_kept_missing"],
  ["8 first kept is a tool result", (i) => (i.current.branch = branch.map((e) => (e.id === "e3" ? { ...e, isToolResult: true } : e))), "first_kept_tool_result"],
  ["9 snapshot leaf on branch", (i) => (i.current.branch = branch.filter((e) => e.id !== "e5")), "snapshot_leaf_missing"],
  ["10 first kept before snapshot leaf", (i) => (i.current.branch = [branch[0], branch[1], branch[4], branch[2], branch[5]]), "first_kept_after_snapshot"],
  ["11 preview fits", (i) => (i.previewTokens = 83_617), "too_large"],
];

describe("validateReadyJob", () => {
  test("a fully valid job passes (boundary: preview exactly at window - reserve)", () => {
    expect(validateReadyJob(valid())).toEqual({ ok: true });
  });

  test("there are exactly eleven checks", () => {
    expect(APPLY_CHECKS.length).toBe(11);
  });

  for (const [name, breakIt, reason] of cases) {
    test(`check ${name} failing alone -> ${reason}`, () => {
      const input = valid();
      breakIt(input);
      const result = validateReadyJob(input);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toBe(reason as never);
    });
  }

  test("blank custom instructions do not count", () => {
    const input = valid();
    input.current.customInstructions = "   ";
    expect(validateReadyJob(input).ok).toBe(true);
  });

  test("first kept equal to snapshot leaf is allowed", () => {
    const input = valid();
    input.snapshot = { ...snapshot, snapshotLeafId: "e3" };
    expect(validateReadyJob(input).ok).toBe(true);
  });
});

describe("validateBranchAnchors", () => {
  test("passes on the original branch and names the failing anchor otherwise", () => {
    expect(validateBranchAnchors(snapshot, branch)).toEqual({ ok: true });
    const r = validateBranchAnchors(snapshot, branch.slice(0, 4));
    expect(r.ok ? undefined : r.reason).toBe("snapshot_leaf_missing");
  });
});
