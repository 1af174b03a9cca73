/**
 * Parity: our `prepareCompaction` against the preparation Pi itself passes to
 * `session_before_compact`, on the shared corpus and on generated sessions.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { prepareCompaction } from "./prepare.ts";
import { piCompactionPrimitives } from "../host/compaction-runtime.ts";
import { DEFAULT_COMPACTION_SETTINGS, type SessionManager } from "@earendil-works/pi-coding-agent";
import { opArb } from "../../test/support/compaction/build-op-arb.ts";
import { capturePiPreparation, comparable } from "../../test/support/compaction/pi-harness.ts";
import { type BuildOp, corpusSession, SessionBuilder } from "../../test/support/compaction/session-builder.ts";

async function expectParity(sm: SessionManager, settings: { reserveTokens?: number; keepRecentTokens?: number } = {}) {
  const pi = await capturePiPreparation(sm, settings);
  const resolved = { ...DEFAULT_COMPACTION_SETTINGS, ...settings };
  const ours = prepareCompaction(sm.getBranch(), resolved, piCompactionPrimitives);
  expect(comparable(ours)).toEqual(comparable(pi));
  return { pi, ours };
}

describe("prepareCompaction parity with Pi (corpus)", () => {
  test("whole corpus, default settings", async () => {
    const { pi } = await expectParity(corpusSession());
    // The corpus is far over 20k tokens, so Pi must actually cut somewhere.
    expect(pi).toBeDefined();
    expect(pi!.messagesToSummarize.length).toBeGreaterThan(0);
  });

  for (const keepRecentTokens of [1000, 5000, 50_000, 150_000]) {
    test(`whole corpus, keepRecentTokens=${keepRecentTokens}`, async () => {
      await expectParity(corpusSession(), { keepRecentTokens });
    });
  }

  for (const limit of [3, 40, 120, 333, 600, 901]) {
    test(`corpus prefix of ${limit} entries`, async () => {
      await expectParity(corpusSession(limit), { keepRecentTokens: 4000 });
    });
  }
});

const A_SESSION: BuildOp[] = [
  { op: "user", chars: 400 },
  { op: "tool_loop", tool: "read", path: "src/a.ts", resultChars: 6000, usage: 3000 },
  { op: "tool_loop", tool: "edit", path: "src/a.ts", resultChars: 300 },
  { op: "reply", chars: 500, usage: 5000 },
  { op: "user", chars: 300 },
  { op: "tool_loop", tool: "write", path: "src/b.ts", resultChars: 200 },
  { op: "tool_loop", tool: "bash", path: "src", resultChars: 9000 },
  { op: "reply", chars: 800, withThinking: true, usage: 9000 },
];

describe("prepareCompaction parity with Pi (generated sessions)", () => {
  test("plain session", async () => {
    const sm = new SessionBuilder().applyAll([...A_SESSION, ...A_SESSION]).sm;
    const { pi } = await expectParity(sm, { keepRecentTokens: 2000 });
    expect([...pi!.fileOps.read]).toContain("src/a.ts");
  });

  test("after a Pi-generated compaction (file lists carried over)", async () => {
    const sm = new SessionBuilder()
      .applyAll(A_SESSION)
      .apply({ op: "compaction", fromHook: false, keepLast: 2, files: { read: ["old/r.ts"], modified: ["old/m.ts"] } })
      .applyAll(A_SESSION).sm;
    const { pi } = await expectParity(sm, { keepRecentTokens: 1500 });
    expect(pi!.previousSummary).toMatch(/^summary /);
    expect([...pi!.fileOps.read]).toContain("old/r.ts");
  });

  test("after an extension compaction (file lists not carried)", async () => {
    const sm = new SessionBuilder()
      .applyAll(A_SESSION)
      .apply({ op: "compaction", fromHook: true, keepLast: 3, files: { read: ["hook/r.ts"], modified: [] } })
      .applyAll(A_SESSION)
      .apply({ op: "compaction", fromHook: false, keepLast: 2 })
      .applyAll(A_SESSION).sm;
    await expectParity(sm, { keepRecentTokens: 1500 });
  });

  test("split turn: one user message with a long tool loop", async () => {
    const loop: BuildOp[] = Array.from({ length: 12 }, (_, i) => ({ op: "tool_loop" as const, tool: "read" as const, path: `f${i}.ts`, resultChars: 3000 }));
    const sm = new SessionBuilder().applyAll([{ op: "user", chars: 100 }, ...loop]).sm;
    const { pi } = await expectParity(sm, { keepRecentTokens: 2000 });
    expect(pi!.isSplitTurn).toBe(true);
  });

  test("context edits, metadata, bash executions, aborted replies", async () => {
    const sm = new SessionBuilder().applyAll([
      ...A_SESSION,
      { op: "replace_last_tool_result", chars: 50 },
      { op: "custom_entry" },
      { op: "thinking_change", level: "high" },
      { op: "bash_execution", chars: 3000 },
      { op: "custom_message", chars: 500 },
      { op: "aborted_reply" },
      { op: "omit_last_assistant" },
      ...A_SESSION,
      { op: "omit_last_assistant" },
    ]).sm;
    await expectParity(sm, { keepRecentTokens: 2500 });
  });

  test("recovery omission suffix: the cut moves past an omitted over-budget attempt", async () => {
    const sm = new SessionBuilder().applyAll([
      ...A_SESSION,
      { op: "user", chars: 20_000 },
      { op: "reply", chars: 300 },
      { op: "omit_last_assistant" },
    ]).sm;
    const { pi } = await expectParity(sm, { keepRecentTokens: 1000 });
    // Pi keeps from the omitted assistant, so the over-budget user input is summarized.
    const firstKept = sm.getEntry(pi!.firstKeptEntryId);
    expect(firstKept?.type === "message" && firstKept.message.role).toBe("assistant");
  });

  test("nothing to compact and already compacted agree", async () => {
    await expectParity(new SessionBuilder().apply({ op: "user", chars: 10 }).sm);
    const compacted = new SessionBuilder().applyAll(A_SESSION).apply({ op: "compaction", fromHook: false, keepLast: 1 }).sm;
    const { pi, ours } = await expectParity(compacted);
    expect(pi).toBeUndefined();
    expect(ours).toBeUndefined();
  });
});


describe("prepareCompaction parity with Pi (property)", () => {
  test("random sessions", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), fc.integer({ min: 100, max: 20_000 }), async (ops, keepRecentTokens) => {
        const sm = new SessionBuilder().applyAll(ops).sm;
        const pi = await capturePiPreparation(sm, { keepRecentTokens });
        const ours = prepareCompaction(sm.getBranch(), { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens }, piCompactionPrimitives);
        expect(comparable(ours)).toEqual(comparable(pi));
      }),
      { numRuns: 60 },
    );
  });
});
