import { describe, expect, test } from "bun:test";
import { emptyReasoningDropTally, reasoningDropOf, tallyReasoningDrop } from "./reasoning-drops.ts";

const anthropic = (n: number, reason = "prefix_mismatch") => ({
  role: "assistant",
  diagnostics: [
    { type: "anthropic_input_transformations", timestamp: 1, details: { transformations: Array.from({ length: n }, (_, i) => ({ type: "thinking_dropped", path: `messages.${i}.content.0`, reason })) } },
  ],
});

describe("reasoning dropped, from Pi's diagnostics", () => {
  test("Anthropic thinking_dropped and OpenAI removed reasoning items are counted; other transformations and diagnostics are not", () => {
    expect(reasoningDropOf(anthropic(2))).toEqual({ blocks: 2, reasons: ["prefix_mismatch"] });
    const openai = { diagnostics: [{ type: "openai_input_transformations", details: { transformations: [{ type: "reasoning", id: "rs_1", action: "removed", reason: "prefix_mismatch" }, { type: "reasoning", id: "rs_2", action: "kept" }] } }] };
    expect(reasoningDropOf(openai)).toEqual({ blocks: 1, reasons: ["prefix_mismatch"] });
    expect(reasoningDropOf({ diagnostics: [{ type: "anthropic_input_transformations", details: { transformations: [{ type: "other" }] } }] })).toBeUndefined();
    expect(reasoningDropOf({ diagnostics: [{ type: "provider_transport_failure" }] })).toBeUndefined();
    expect(reasoningDropOf({ role: "assistant" })).toBeUndefined();
    expect(reasoningDropOf(null)).toBeUndefined();
    expect(reasoningDropOf({ diagnostics: "junk" })).toBeUndefined();
  });

  test("a removal reported again on later requests is lost once; after a rewrite every block reported counts; the keeper's apart", () => {
    let t = emptyReasoningDropTally();
    t = tallyReasoningDrop(t, { role: "assistant" });
    t = tallyReasoningDrop(t, anthropic(2), { keeperRewrote: true }); // the keeper's rewrite: 2 lost
    t = tallyReasoningDrop(t, anthropic(2)); // the same 2 reported again
    t = tallyReasoningDrop(t, { role: "toolResult" }); // not an answer: no baseline reset
    t = tallyReasoningDrop(t, anthropic(3)); // one more
    expect(t).toEqual({ requests: 3, blocksLost: 3, afterKeeperRewrite: 2, lastBlocks: 3, reasons: ["prefix_mismatch"] });
    // Another rewrite: what it reports is decided anew (the earlier blocks may be gone from history).
    const after = tallyReasoningDrop(t, anthropic(1), { rewritten: true });
    expect(after.blocksLost).toBe(4);
    const quiet = tallyReasoningDrop(after, { role: "assistant" });
    expect(quiet.lastBlocks).toBe(0);
    expect(tallyReasoningDrop(quiet, { role: "assistant" })).toBe(quiet);
  });
});
