import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatFidelity, formatHeadlineFidelity, measureBatches, measureFidelity, ownTextOfCall, prunedKeysOf, renderedCallsOf, visibleText } from "./fidelity.ts";
import { emptyState } from "../../src/state/schema.ts";
import { describeCall } from "../../src/prune/stub-text.ts";
import { proposeErrorPurges } from "../../src/flush/plan-errors.ts";
import { DEFAULT_PRUNE_CONFIG } from "../../src/prune/config.ts";
import { pairToolCalls } from "../../src/prune/occurrence.ts";
import { protectionMatcher } from "../../src/prune/protection.ts";
import type { ToolBatch } from "../../src/summarize/batch.ts";
import { assistant, call, result, text, user } from "../support/message-factory.ts";

const CORPUS = join(import.meta.dir, "../../corpus/large-session.jsonl");

function batch(calls: Array<{ name: string; args: Record<string, unknown>; out: string }>): ToolBatch {
  return {
    batchKey: "b@1#0",
    assistantTimestamp: 1,
    calls: calls.map((c, i) => ({
      occurrenceKey: `c${i}@1#0`,
      toolCallId: `c${i}`,
      toolName: c.name,
      arguments: c.args,
      resultText: c.out,
      isError: false,
      assistantTimestamp: 1,
      resultTimestamp: 2,
    })),
  };
}

describe("fidelity: the measure", () => {
  test("counts argument paths, output paths and commands; visible means anywhere in the text", () => {
    const b = batch([
      { name: "read", args: { path: "src/a.ts" }, out: "import x from './lib/b.ts'\n" },
      { name: "bash", args: { command: "ls -la docs" }, out: "docs/guide.md\n" },
    ]);
    // Facts: argument path src/a.ts; output paths ./lib/b.ts, docs/guide.md; command "ls -la docs".
    const m = measureBatches([b], "… read(path=src/a.ts) … docs/guide.md … ls -la docs");
    expect(m.byKind.argumentPath).toEqual({ total: 1, visible: 1 });
    expect(m.byKind.outputPath).toEqual({ total: 2, visible: 1 });
    expect(m.byKind.command).toEqual({ total: 1, visible: 1 });
    expect(m.all).toEqual({ total: 4, visible: 3 });
    expect(m.fraction).toBe(0.75);
    expect(m.missing).toEqual([{ batchKey: "b@1#0", kind: "outputPath", value: "./lib/b.ts" }]);
    expect(measureBatches([], "").fraction).toBe(1);
  });

  test("visible text holds raw argument strings (not JSON-escaped), texts and results", () => {
    const msgs = [
      user("look", 1),
      assistant([text("sure"), call("c1", "bash", { command: 'grep -n "x" a.ts' })], 2),
      result("c1", "bash", "1: x", 3),
    ];
    const t = visibleText(msgs);
    expect(t).toContain('grep -n "x" a.ts');
    expect(t).toContain("sure");
    expect(t).toContain("1: x");
  });

  test("a recorded chain counts as pruned only when the render shows its text", () => {
    const s = emptyState();
    s.frontier.compressedChains = [
      { chainKey: "chain:x", fromTimestamp: 1, toTimestamp: 2, firstCallKey: "a@1#0", messageCount: 2, memberKeys: ["a@1#0"], summaryRefs: [], text: "CHAIN TEXT" },
    ];
    s.frontier.stubbedKeys = ["b@1#0"];
    expect([...prunedKeysOf(s, "no chain here").entries()]).toEqual([["b@1#0", "stubbed"]]);
    expect(prunedKeysOf(s, "… CHAIN TEXT …").get("a@1#0")).toBe("chain");
  });
});

describe("fidelity counted in each batch's own text", () => {
  const msgs = [
    user("go", 1),
    assistant([call("a", "read", { path: "src/a.ts" }), call("b", "read", { path: "src/b.ts" })], 10),
    result("a", "read", "see lib/x.ts and lib/y.ts", 11),
    result("b", "read", "see lib/z.ts", 12),
    assistant([call("c", "read", { path: "src/a.ts" })], 20),
    result("c", "read", "see lib/x.ts and lib/y.ts", 21),
    assistant([text("done; lib/z.ts matters")], 30),
    user("next", 40),
  ];
  const state = emptyState();
  state.summaries["batch:a@10"] = {
    batchKey: "batch:a@10",
    coveredKeys: ["a@10#0", "b@10#0"],
    summary: { batchKey: "batch:a@10", text: "a.ts points at lib/x.ts", source: "extractive", inputTokens: 0, outputTokens: 0, cost: 0 },
  } as (typeof state.summaries)[string];
  state.frontier.stubbedKeys = ["a@10#0", "b@10#0"];
  state.frontier.aliases = { "c@20#0": "a@10#0" };
  const context = { state, rendered: msgs, renderedCalls: renderedCallsOf(msgs) };

  test("a pointer stub is followed to the stub it points at; the call's own arguments count", () => {
    const b = ownTextOfCall("b@10#0", "stubbed", context);
    expect(b).toContain("summarized with ref=a@10#0");
    expect(b).toContain("a.ts points at lib/x.ts");
    expect(b).toContain("src/b.ts");
    const c = ownTextOfCall("c@20#0", "aliased", context);
    expect(c).toContain("identical to the output of ref=a@10#0");
    expect(c).toContain("lib/x.ts");
  });

  test("a path named elsewhere in the render is visible anywhere but missing from the batch's own text", () => {
    const batchB: ToolBatch = batch([{ name: "read", args: { path: "src/b.ts" }, out: "see lib/z.ts" }]);
    const own = measureBatches([batchB], () => ownTextOfCall("b@10#0", "stubbed", context));
    const anywhere = measureBatches([batchB], visibleText(msgs));
    expect(anywhere.byKind.outputPath).toEqual({ total: 1, visible: 1 }); // the final answer names lib/z.ts
    expect(own.byKind.outputPath).toEqual({ total: 1, visible: 0 }); // the summary dropped it
    expect(own.missing).toEqual([{ batchKey: "b@1#0", kind: "outputPath", value: "lib/z.ts" }]);
  });
});

describe("fidelity fixes: what pruning keeps", () => {
  test("chain call lines keep commands and paths whole; other long values are cut", () => {
    const cmd = `grep -A 15 "export function getMarkdownTheme" packages/coding-agent/src/theme/theme.ts | head -40`;
    expect(cmd.length).toBeGreaterThan(80);
    expect(describeCall("bash", { command: cmd, timeout: 30 })).toBe(`bash(command=${cmd}, timeout=30)`);
    const line = describeCall("edit", { path: "a/very/long/path/".repeat(6) + "x.ts", oldText: "y ".repeat(100) });
    expect(line).toContain("a/very/long/path/".repeat(6) + "x.ts");
    expect(line).toContain(`oldText=${"y ".repeat(40)}…`);
  });

  test("a failed call holding only its command is not purged (nothing to gain, the command is the fact)", () => {
    const msgs = [
      user("go", 1),
      assistant([call("b", "bash", { command: "grep -n nope src/a.ts", timeout: 30 }), call("e", "edit", { path: "a.ts", oldText: "x".repeat(300) })], 10),
      result("b", "bash", "Command exited with code 1", 11, true),
      result("e", "edit", "oldText not found", 12, true),
      assistant([text("a")], 13),
      assistant([text("b")], 14),
    ];
    const config = { ...DEFAULT_PRUNE_CONFIG, errorPurge: { enabled: true, cooldownTurns: 1 } };
    const keys = proposeErrorPurges({ messages: msgs, pairing: pairToolCalls(msgs), alreadyPurged: new Set(), config, protection: protectionMatcher(config) });
    expect(keys).toEqual(["e@10#0"]);
  });
});

describe("fidelity on the shared corpus (extractive summaries)", () => {
  test("≥ 90% of the file paths and commands of pruned batches stay visible in the final render", () => {
    const report = measureFidelity({ sessionText: readFileSync(CORPUS, "utf8"), file: CORPUS });
    console.log(`[fidelity] ${formatHeadlineFidelity(report)}`);
    console.log(`[fidelity] ${formatFidelity(report)}; pruned calls ${JSON.stringify(report.prunedCalls)}`);
    console.log(`[fidelity] own-text misses: ${report.own.missing.slice(0, 20).map((m) => `${m.kind} ${m.value}`).join(" | ")}`);
    if (report.missing.length > 0) console.log(`[fidelity] not visible: ${report.missing.map((m) => `${m.kind} ${m.value}`).join(" | ")}`);
    // Sanity: the replay really pruned a large part of the session.
    expect(report.requests).toBe(439);
    expect(report.prunedBatches).toBeGreaterThan(100);
    expect(report.all.total).toBeGreaterThan(200);
    expect(report.fraction).toBeGreaterThanOrEqual(0.9);
    // Every ref the render offers can be indexed for recall (all hidden calls, not only summarized batches).
    console.log(`[fidelity] recall refs shown ${report.refs.shown}: ${report.refs.inSummarizedBatches} in summarized batches, ${report.refs.inPrunedCalls} in prunedCallsOf`);
    expect(report.refs.shown).toBeGreaterThan(100);
    expect(report.refs.notRecallable).toEqual([]);
    // Commands are kept whole everywhere (stubs, chain call lines); none may be lost.
    expect(report.byKind.command.visible).toBe(report.byKind.command.total);
    // The headline: output paths named in each pruned batch's own stub, summary or chain line.
    expect(report.own.byKind.outputPath.total).toBeGreaterThan(100);
    expect(report.own.byKind.outputPath.visible / report.own.byKind.outputPath.total).toBeGreaterThanOrEqual(0.9);
    expect(report.own.all.visible).toBeLessThanOrEqual(report.all.visible);
  }, 120_000);
});
