import { describe, expect, test } from "bun:test";
import { keptFactLinesOf, proposeChains } from "./plan-chains.ts";
import { pairToolCalls } from "../prune/occurrence.ts";
import { protectionMatcher } from "../prune/protection.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { SummaryRecord } from "../state/schema.ts";
import { flushConfig } from "../../test/support/flush/session.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

const BIG = "x".repeat(3000);

/** p1: a read of a.ts, answered; p2: a batch with a failed tiny call and a re-read of a.ts (an identical output), answered. */
function session(): ContextMessage[] {
  return [
    user("p1", 1),
    assistant([call("a", "read", { path: "a.ts" })], 2),
    result("a", "read", BIG, 3),
    assistant([text("a read")], 4),
    user("p2", 5),
    assistant([call("f", "bash", { command: "ls nope" }), call("a2", "read", { path: "a.ts" })], 6),
    result("f", "bash", "ls: nope: No such file", 7, true),
    result("a2", "read", BIG, 8),
    assistant([text("p2 answered")], 9),
  ];
}

function chainsFor(messages: ContextMessage[], rollingWindow: number, aliases: Record<string, string>) {
  const config = { ...flushConfig, chainCompression: { enabled: true, rollingWindow } };
  return proposeChains({
    messages,
    pairing: pairToolCalls(messages),
    summaries: {},
    aliases,
    existingChainKeys: new Set(),
    config,
    protection: protectionMatcher(config),
  });
}

describe("proposeChains", () => {
  test("a batch whose outputs are each aliased or trivial collapses (the aliased output's size does not count)", () => {
    const withNext = [...session(), user("p3", 10)];
    // a2 repeats a byte for byte (aliased); f is a 22-character failure: the p2 chain collapses.
    const chains = chainsFor(withNext, 1, { "a2@6#0": "a@2#0" });
    expect(chains.map((c) => c.chainKey)).toContain("chain:batch:f@6");
    const p2 = chains.find((c) => c.chainKey === "chain:batch:f@6")!;
    expect(p2.text).toContain("- bash(command=ls nope) (failed) ref=f@6#0");
    expect(p2.text).toContain("- read(path=a.ts) ref=a2@6#0");
    // Without the alias the 3,000-character output is neither summarized nor trivial: no collapse.
    expect(chainsFor(withNext, 1, {}).map((c) => c.chainKey)).not.toContain("chain:batch:f@6");
  });

  test("rollingWindow 0: the chain that just ended collapses at the flush of its own final answer", () => {
    const aliases = { "a2@6#0": "a@2#0" };
    expect(chainsFor(session(), 0, aliases).map((c) => c.chainKey)).toContain("chain:batch:f@6");
    // rollingWindow 1 waits for one more prompt.
    expect(chainsFor(session(), 1, aliases).map((c) => c.chainKey)).not.toContain("chain:batch:f@6");
    // Inside a running loop (the branch ends on a result) there is no final answer yet: nothing new.
    const inLoop = session().slice(0, 8);
    expect(chainsFor(inLoop, 0, aliases).map((c) => c.chainKey)).not.toContain("chain:batch:f@6");
  });

  test("a keeper_recall does not pin its loop: the chain collapses at its answer, the recall's line names the ref it recalled", () => {
    const messages: ContextMessage[] = [
      ...session(),
      user("p3", 10),
      assistant([call("k", "keeper_recall", { ref: "a@2#0", pattern: "needle" })], 11),
      result("k", "keeper_recall", `[keeper_recall ref=a@2#0] 1 match\n${BIG} src/x.ts`, 12),
      assistant([text("p3 answered")], 13),
    ];
    const chains = chainsFor(messages, 0, { "a2@6#0": "a@2#0" });
    const p3 = chains.find((c) => c.chainKey === "chain:batch:k@11");
    expect(p3?.text).toContain("- keeper_recall(ref=a@2#0, pattern=needle) ref=k@11#0");
    expect(p3?.text).not.toContain("src/x.ts");
    // Protected by name, the same recall still pins its loop.
    const config = { ...flushConfig, protectedTools: ["keeper_recall"], chainCompression: { enabled: true, rollingWindow: 0 } };
    const pinned = proposeChains({ messages, pairing: pairToolCalls(messages), summaries: {}, aliases: { "a2@6#0": "a@2#0" }, existingChainKeys: new Set(), config, protection: protectionMatcher(config) });
    expect(pinned.map((c) => c.chainKey)).not.toContain("chain:batch:k@11");
  });

  test("a failed call's failing tests and error lines stay under its call line, once across chains", () => {
    const failing = "FAIL test/a.test.ts > a > rounds the quota\nAssertionError: expected 3 to be 2\n" + "ok line\n".repeat(400) + "Command exited with code 1";
    const messages: ContextMessage[] = [
      user("p1", 1),
      assistant([call("t", "bash", { command: "npm test" })], 2),
      result("t", "bash", failing, 3, true),
      assistant([text("one test fails")], 4),
    ];
    const record: SummaryRecord = { version: 1, batchKey: "batch:t@2", summary: { batchKey: "batch:t@2", text: "npm test failed", source: "extractive", inputTokens: 0, outputTokens: 0, cost: 0 }, coveredKeys: ["t@2#0"], outputHashes: {}, flushSeq: 1 };
    const summaries = { "batch:t@2": record };
    const config = { ...flushConfig, chainCompression: { enabled: true, rollingWindow: 0 } };
    const input = { messages, pairing: pairToolCalls(messages), summaries, aliases: {}, existingChainKeys: new Set<string>(), config, protection: protectionMatcher(config) };
    const [chain] = proposeChains(input);
    expect(chain!.text).toContain("- bash(command=npm test) (failed) → paths: test/a.test.ts ref=t@2#0\n    FAIL test/a.test.ts > a > rounds the quota\n    AssertionError: expected 3 to be 2");
    expect(chain!.text).not.toContain("ok line");
    expect([...keptFactLinesOf([chain!])]).toEqual(["FAIL test/a.test.ts > a > rounds the quota", "AssertionError: expected 3 to be 2"]);
    // A later chain does not repeat what an earlier one keeps; keptFactChars 0 keeps call lines only.
    const [again] = proposeChains({ ...input, keptLines: keptFactLinesOf([chain!]) });
    expect(again!.text).not.toContain("    FAIL");
    const [bare] = proposeChains({ ...input, config: { ...config, chainCompression: { ...config.chainCompression, keptFactChars: 0 } } });
    expect(bare!.text.split("\n")).toHaveLength(2);
  });

  test("a failed call whose arguments the line cuts says that arguments=true recalls them; one shown whole does not", () => {
    const content = "line\n".repeat(5000);
    const messages: ContextMessage[] = [
      user("p1", 1),
      assistant([call("w", "write", { path: "out/r.txt", content }), call("l", "bash", { command: "ls out" })], 2),
      result("w", "write", "EISDIR: illegal operation", 3, true),
      result("l", "bash", "ls: out: No such file", 4, true),
      assistant([text("both failed")], 5),
    ];
    const [chain] = chainsFor(messages, 0, {});
    const lines = chain!.text.split("\n");
    expect(lines.find((l) => l.startsWith("- write("))).toMatch(/^- write\(path=out\/r\.txt, content=line line .*…\) \(failed; arguments=true recalls its arguments\) ref=w@2#0$/);
    expect(lines.find((l) => l.startsWith("- bash("))).toBe("- bash(command=ls out) (failed) ref=l@2#0");
  });

  test("a loop whose prompt a compaction summarized (the context opens mid-loop with the summary) collapses like any other", () => {
    // Pi's context after a compaction cut inside a loop: the summary, then the loop's kept steps.
    const summary = { role: "compactionSummary", summary: "## Goal\nread the files", tokensBefore: 90_000, timestamp: 1 } as unknown as ContextMessage;
    const messages: ContextMessage[] = [
      summary,
      assistant([call("a", "read", { path: "a.ts" })], 2),
      result("a", "read", "tiny a", 3),
      assistant([call("b", "read", { path: "b.ts" })], 4),
      result("b", "read", "tiny b", 5),
      assistant([text("both read")], 6),
    ];
    // At the flush of its final answer (rollingWindow 0), and once the next prompt came (rollingWindow 1).
    expect(chainsFor(messages, 0, {}).map((c) => c.chainKey)).toEqual(["chain:batch:a@2"]);
    expect(chainsFor([...messages, user("p2", 7)], 1, {}).map((c) => c.chainKey)).toEqual(["chain:batch:a@2"]);
    // The summary is not a prompt after anything: with rollingWindow 1 and no next prompt, nothing yet.
    expect(chainsFor(messages, 1, {})).toEqual([]);
    // Steps already in a recorded chain (collapsed before the compaction cut into it) render with that chain: no new one.
    const config = { ...flushConfig, chainCompression: { enabled: true, rollingWindow: 0 } };
    const recorded = proposeChains({ messages, pairing: pairToolCalls(messages), summaries: {}, aliases: {}, existingChainKeys: new Set(), existingMembers: new Set(["a@2#0", "b@4#0"]), config, protection: protectionMatcher(config) });
    expect(recorded).toEqual([]);
  });

  test("a batch kept raw (its summary was not shorter: an output of error lines only) does not hold its chain back", () => {
    const errorsOnly = Array.from({ length: 60 }, (_, i) => `${i}: ERROR worker failed: timeout`).join("\n");
    const messages: ContextMessage[] = [user("p1", 1), assistant([call("g", "bash", { command: "grep -n ERROR logs/w.log" })], 2), result("g", "bash", errorsOnly, 3), assistant([text("errors seen")], 4)];
    const raw: SummaryRecord = { version: 1, batchKey: "batch:g@2", summary: { batchKey: "batch:g@2", text: "", source: "raw", inputTokens: 0, outputTokens: 0, cost: 0 }, coveredKeys: ["g@2#0"], outputHashes: {}, flushSeq: 1 };
    const config = { ...flushConfig, chainCompression: { enabled: true, rollingWindow: 0 } };
    const chains = proposeChains({ messages, pairing: pairToolCalls(messages), summaries: { "batch:g@2": raw }, aliases: {}, existingChainKeys: new Set(), config, protection: protectionMatcher(config) });
    expect(chains.map((c) => c.chainKey)).toEqual(["chain:batch:g@2"]);
    // Not summarized at all (a model summary still pending), it still holds it back.
    expect(proposeChains({ messages, pairing: pairToolCalls(messages), summaries: {}, aliases: {}, existingChainKeys: new Set(), config, protection: protectionMatcher(config) })).toEqual([]);
  });
});

