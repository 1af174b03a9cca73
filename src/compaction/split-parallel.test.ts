/**
 * The default adapter's parallel split-turn summary against Pi's own sequential `compact()`:
 * the same text, details and usage, with the two model calls overlapping.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createFauxCore, fauxAssistantMessage } from "@earendil-works/pi-ai";
import { compact, DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import { type BuildOp, SessionBuilder } from "../../test/support/compaction/session-builder.ts";
import { piCompactionPrimitives } from "../host/compaction-runtime.ts";
import { prepareCompaction } from "./prepare.ts";
import type { CompactionPreparation } from "./primitives.ts";
import { compactSplitInParallel, splitsInTwo } from "./split-parallel.ts";

const SHORT_PROMPT: BuildOp[] = [
  { op: "user", chars: 300 },
  { op: "tool_loop", tool: "read", path: "src/a.ts", resultChars: 2000 },
  { op: "tool_loop", tool: "edit", path: "src/a.ts", resultChars: 100 },
  { op: "reply", chars: 300 },
];

/** Two prompts, the second a long tool loop: the cut falls inside it, the first is history. */
function splitSession(opts: { previousCompaction: boolean }): CompactionPreparation {
  const b = new SessionBuilder();
  b.applyAll(SHORT_PROMPT).applyAll(SHORT_PROMPT);
  if (opts.previousCompaction) b.apply({ op: "compaction", fromHook: false, keepLast: 2, files: { read: ["old.ts"], modified: [] } }).applyAll(SHORT_PROMPT);
  b.apply({ op: "user", chars: 300 });
  for (let i = 0; i < 12; i++) b.apply({ op: "tool_loop", tool: "read", path: `src/f${i}.ts`, resultChars: 3000 });
  const prepared = prepareCompaction(b.sm.getBranch(), { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 4000 }, piCompactionPrimitives);
  if (!prepared) throw new Error("nothing to compact");
  return prepared;
}

/** A faux model whose answer depends only on what it is asked, and which records call overlap. */
function contentFaux(delayMs: number) {
  const faux = createFauxCore({ models: [{ id: "faux-split", contextWindow: 200_000 }] });
  let inFlight = 0;
  let maxInFlight = 0;
  const answer = async (context: { messages: Array<{ content: unknown }> }) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, delayMs));
    inFlight--;
    // What the model reads (timestamps differ between runs and do not matter).
    const text = JSON.stringify(context.messages.map((m) => m.content));
    const kind = text.includes("earlier context from an ongoing conversation") ? "turn prefix" : "history";
    return fauxAssistantMessage(`## ${kind}\n${createHash("sha256").update(text).digest("hex").slice(0, 16)}`);
  };
  faux.setResponses(Array.from({ length: 8 }, () => answer as never));
  return { faux, maxInFlight: () => maxInFlight };
}

describe("split turn summaries in parallel", () => {
  for (const previousCompaction of [false, true]) {
    test(`same result as Pi's sequential compact()${previousCompaction ? " after an earlier compaction" : ""}`, async () => {
      const prepared = splitSession({ previousCompaction });
      expect(splitsInTwo(prepared)).toBe(true);
      expect(prepared.previousSummary !== undefined).toBe(previousCompaction);
      const seq = contentFaux(0);
      const sequential = await compact(prepared, seq.faux.getModel(), "k", undefined, undefined, undefined, undefined, seq.faux.streamSimple as never);
      const par = contentFaux(30);
      const parallel = await compactSplitInParallel(prepared, (p) => compact(p, par.faux.getModel(), "k", undefined, undefined, undefined, undefined, par.faux.streamSimple as never));
      expect(parallel.summary).toBe(sequential.summary);
      expect(parallel.details).toEqual(sequential.details);
      expect(parallel.firstKeptEntryId).toBe(sequential.firstKeptEntryId);
      expect(parallel.tokensBefore).toBe(sequential.tokensBefore);
      expect(parallel.usage?.totalTokens).toBe(sequential.usage?.totalTokens);
      expect(parallel.summary).toContain("**Turn Context (split turn):**");
      expect(par.maxInFlight()).toBe(2); // the two calls overlapped
    });
  }

  test("not split, or nothing before the turn: one call, nothing to overlap", () => {
    const prepared = splitSession({ previousCompaction: false });
    expect(splitsInTwo({ ...prepared, isSplitTurn: false })).toBe(false);
    expect(splitsInTwo({ ...prepared, messagesToSummarize: [] })).toBe(false);
  });
});
