import { describe, expect, test } from "bun:test";
import { chainCompress, chainMessage } from "./chain-compress.ts";
import { findClosedChains } from "./chains.ts";
import { pairToolCalls } from "./occurrence.ts";
import type { CompressedChain } from "../state/schema.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { config, frozen, stateWith } from "../../test/support/prune/fixtures.ts";

// cycle 1: prompt(1) A(10) R(11) A(12) R(13) R(14) answer(15) | prompt 2 (20)...
const msgs = frozen([
  user("first", 1),
  assistant([call("a", "read", { path: "x" })], 10),
  result("a", "read", "xx", 11),
  assistant([call("b", "bash"), call("c", "bash")], 12),
  result("b", "bash", "bb", 13),
  result("c", "bash", "cc", 14),
  assistant([text("answer one")], 15),
  user("second", 20),
  assistant([call("d", "read")], 21),
  result("d", "read", "dd", 22),
  assistant([text("answer two")], 23),
  user("third", 30),
  assistant([call("e", "read")], 31),
  result("e", "read", "ee", 32),
]);

const chain1: CompressedChain = {
  chainKey: "chain:batch:a@10",
  fromTimestamp: 10,
  toTimestamp: 14,
  firstCallKey: "a@10#0",
  messageCount: 5,
  memberKeys: ["a@10#0", "b@12#0", "c@12#0"],
  summaryRefs: [],
  text: "[context-keeper] compressed tool chain: three calls",
};

describe("findClosedChains", () => {
  test("finds chains closed by a later prompt, with prompts-after counts", () => {
    const chains = findClosedChains(msgs, pairToolCalls(msgs));
    expect(chains).toEqual([
      { promptIndex: 0, startIndex: 1, endIndex: 5, answerIndex: 6, promptsAfter: 2 },
      { promptIndex: 7, startIndex: 8, endIndex: 9, answerIndex: 10, promptsAfter: 1 },
    ]);
  });

  test("a compaction summary opens the loop it cut into (its prompt was summarized); it is not a prompt after", () => {
    const summary = { role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 5 } as unknown as (typeof msgs)[number];
    const cut = [summary, ...msgs.slice(3)];
    expect(findClosedChains(cut, pairToolCalls(cut))).toEqual([
      { promptIndex: 0, startIndex: 1, endIndex: 3, answerIndex: 4, promptsAfter: 2 },
      { promptIndex: 5, startIndex: 6, endIndex: 7, answerIndex: 8, promptsAfter: 1 },
    ]);
    const chain: CompressedChain = { ...chain1, chainKey: "chain:batch:b@12", fromTimestamp: 12, firstCallKey: "b@12#0", messageCount: 3, memberKeys: ["b@12#0", "c@12#0"] };
    const out = chainCompress(cut, { state: stateWith({ chains: [chain] }), config });
    expect(out.map((m) => (m as { role: string }).role)).toEqual(["compactionSummary", "user", "assistant", "user", "assistant", "toolResult", "assistant", "user", "assistant", "toolResult"]);
  });

  test("a cycle whose last assistant still calls tools, or with a result missing, is no chain", () => {
    const open = [user("p", 1), assistant([call("a", "read")], 2), result("a", "read", "r", 3), user("q", 4)];
    expect(findClosedChains(open, pairToolCalls(open))).toEqual([]);
    const missing = [user("p", 1), assistant([call("a", "read"), call("b", "read")], 2), result("a", "read", "r", 3), assistant([text("x")], 4), user("q", 5)];
    expect(findClosedChains(missing, pairToolCalls(missing))).toEqual([]);
  });
});

describe("chainCompress", () => {
  test("no chains: same reference", () => {
    expect(chainCompress(msgs, { state: stateWith({}), config })).toBe(msgs);
  });

  test("collapses the chain into one user message at the chain's first timestamp, keeping prompt and answer", () => {
    const out = chainCompress(msgs, { state: stateWith({ chains: [chain1] }), config });
    // 14 messages - 5 chain members + 1 synthetic = 10
    expect(out.length).toBe(10);
    expect(out[0]).toBe(msgs[0]);
    expect(out[1]).toEqual({ role: "user", content: [{ type: "text", text: chain1.text }], timestamp: 10 });
    expect(out[2]).toBe(msgs[6]);
    expect(out.slice(3)).toEqual(msgs.slice(7));
    for (let i = 3; i < out.length; i++) expect(out[i]).toBe(msgs[i + 4]);
    // idempotent: the chain is no longer there to find
    expect(chainCompress(out, { state: stateWith({ chains: [chain1] }), config })).toBe(out);
  });

  test("a tool Pi declared mid-loop (a system message inside the chain) is found, and kept right after the summary", () => {
    const patch = { role: "system", content: "", toolsAdded: [{ name: "late", description: "d", parameters: {} }], timestamp: 12.5 } as never;
    const withPatch = frozen([...msgs.slice(0, 4), patch, ...msgs.slice(4)]);
    expect(findClosedChains(withPatch, pairToolCalls(withPatch))[0]).toEqual({ promptIndex: 0, startIndex: 1, endIndex: 6, answerIndex: 7, promptsAfter: 2 });
    const out = chainCompress(withPatch, { state: stateWith({ chains: [{ ...chain1, messageCount: 6 }] }), config });
    expect(out.slice(0, 4)).toEqual([withPatch[0], chainMessage({ ...chain1, messageCount: 6 }), patch, withPatch[7]]);
    expect(out[2]).toBe(patch);
    expect(out.length).toBe(withPatch.length - 6 + 2);
  });

  test("a recorded chain a compaction cut into: what is left of it after Pi's summary collapses with the same text", () => {
    const summary = { role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 100 } as unknown as (typeof msgs)[number];
    // Pi kept from message 3 (the chain's second step) on: the head (a@10) is summarized.
    const cut = [summary, ...msgs.slice(3)];
    const out = chainCompress(cut, { state: stateWith({ chains: [chain1] }), config });
    expect(out.map((m) => (m as { role: string }).role)).toEqual(["compactionSummary", "user", "assistant", "user", "assistant", "toolResult", "assistant", "user", "assistant", "toolResult"]);
    expect(out[1]).toMatchObject({ role: "user", content: [{ type: "text", text: chain1.text }] });
    // The transcript's system messages may come first (Pi 1.x).
    const system = { role: "system", content: "prompt", timestamp: 1 } as unknown as (typeof msgs)[number];
    expect(chainCompress([system, ...cut], { state: stateWith({ chains: [chain1] }), config })[2]).toMatchObject({ role: "user", content: [{ type: "text", text: chain1.text }] });
    // Not a member at the head, or no summary at the head: left alone.
    const other = { ...chain1, memberKeys: ["a@10#0"] };
    expect(chainCompress(cut, { state: stateWith({ chains: [other] }), config })).toBe(cut);
    const noSummary = msgs.slice(3);
    expect(chainCompress(noSummary, { state: stateWith({ chains: [chain1] }), config })).toBe(noSummary);
  });

  test("a record that no longer matches exactly is left alone", () => {
    for (const bad of [{ ...chain1, messageCount: 4 }, { ...chain1, toTimestamp: 99 }, { ...chain1, fromTimestamp: 9 }, { ...chain1, firstCallKey: "zz@10#0" }]) {
      expect(chainCompress(msgs, { state: stateWith({ chains: [bad] }), config })).toBe(msgs);
    }
  });

  test("a chain whose answer is followed by no user message (current loop) is never collapsed", () => {
    const tail = msgs.slice(0, 7);
    expect(chainCompress(tail, { state: stateWith({ chains: [chain1] }), config })).toBe(tail);
  });
});
