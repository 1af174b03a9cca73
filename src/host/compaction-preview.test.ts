/**
 * The "compacted context fits" check measures the context as the keeper will send it: with
 * pruning on, the raw kept tail can exceed the window while the pruned one fits (that case made
 * Pi run its own synchronous compaction on the wire).
 */
import { describe, expect, test } from "bun:test";
import { previewAfterApply } from "../compaction/preview.ts";
import type { AgentMessage, SessionEntry } from "../compaction/primitives.ts";
import { corpusSession } from "../../test/support/compaction/session-builder.ts";
import { piCompactionPrimitives } from "./compaction-runtime.ts";

describe("previewAfterApply with the keeper's render", () => {
  test("measures the messages as sent; without a render, the raw projection", () => {
    const branch = corpusSession(120).getBranch() as SessionEntry[];
    const firstKept = branch[Math.floor(branch.length / 2)]!.id;
    const result = { summary: "summary of the first half", firstKeptEntryId: firstKept };
    const raw = previewAfterApply(branch, result, piCompactionPrimitives);
    const shrink = (messages: AgentMessage[]): AgentMessage[] =>
      messages.map((m) => ((m as { role?: string }).role === "toolResult" ? ({ ...m, content: [{ type: "text", text: "[pruned]" }] } as AgentMessage) : m));
    const sent = previewAfterApply(branch, result, piCompactionPrimitives, shrink);
    expect(raw.tokens).toBeGreaterThan(0);
    expect(sent.tokens).toBeLessThan(raw.tokens);
    expect(sent.messages.length).toBe(raw.messages.length);
    expect(previewAfterApply(branch, result, piCompactionPrimitives, (m) => m).tokens).toBe(raw.tokens);
  });
});
