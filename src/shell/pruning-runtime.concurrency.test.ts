/**
 * Concurrency of the pruning runtime (issue #14), over a real in-memory Pi SessionManager and a
 * summarizer model the test releases by hand: two flushes requested at once, a flush racing a
 * compaction apply, a restart while a summary is in flight, `/keeper now` during a tool loop.
 */
import { describe, expect, test } from "bun:test";
import { SessionManager, type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { CUSTOM_TYPE_FRONTIER, CUSTOM_TYPE_SUMMARY } from "../state/schema.ts";
import { restoreReconciled } from "../state/torn-flush.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import type { SummaryStream } from "../summarize/summary-call.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { deferred, type Deferred } from "../../test/support/compaction/fake-pi.ts";
import { resultMessage, scriptedStream } from "../../test/support/summarize/fake-model.ts";
import { createPruningRuntime, type PruningRuntime } from "./pruning-runtime.ts";

const SETTINGS: KeeperSettings = {
  ...DEFAULT_SETTINGS,
  pruning: { ...DEFAULT_SETTINGS.pruning, minBatchChars: 100, budgetTrigger: { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false } },
  summarizer: { ...DEFAULT_SETTINGS.summarizer, mode: "model" },
};
const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const out = (name: string) => `${name} output line\n`.repeat(40);

/** A summarizer whose calls wait until the test releases them (each call gets its own gate). */
function gatedModel() {
  const gates: Deferred<void>[] = [];
  const streamSimple = (): SummaryStream => {
    const gate = deferred<void>();
    gates.push(gate);
    const inner = scriptedStream(resultMessage(`summary ${gates.length}`));
    return {
      async *[Symbol.asyncIterator]() {
        await gate.promise;
        yield* inner;
      },
      result: async () => {
        await gate.promise;
        return inner.result();
      },
    };
  };
  return { gates, streamSimple, releaseAll: () => gates.forEach((g) => g.resolve()) };
}

interface Harness {
  sm: SessionManager;
  ctx: ExtensionContext;
  runtime: PruningRuntime;
  model: ReturnType<typeof gatedModel>;
  notices: string[];
  append(m: ContextMessage): string;
}

function harness(sm = SessionManager.inMemory("/tmp/keeper-concurrency")): Harness {
  const model = gatedModel();
  const notices: string[] = [];
  const ctx = {
    sessionManager: sm,
    model: MODEL,
    modelRegistry: { streamSimple: model.streamSimple, find: () => undefined },
    getContextUsage: () => ({ tokens: 10_000, contextWindow: 200_000 }),
    hasUI: false,
    cwd: "/tmp/keeper-concurrency",
  } as unknown as ExtensionContext;
  const pi = { appendEntry: (type: string, data: unknown) => sm.appendCustomEntry(type, data) } as unknown as ExtensionAPI;
  const runtime = createPruningRuntime({ pi, settings: () => SETTINGS, status: () => {}, notify: (_c, t) => notices.push(t), now: () => 1_000 });
  runtime.restore(ctx);
  return { sm, ctx, runtime, model, notices, append: (m) => sm.appendMessage(m as never) };
}

/** Two finished prompts with one tool batch each; returns the closing message of the second. */
function twoPrompts(h: Harness): ContextMessage {
  h.append(user("p1", 10));
  h.append(assistant([call("a", "read", { path: "a.ts" })], 11));
  h.append(result("a", "read", out("a"), 12));
  h.append(assistant([text("done 1")], 13));
  h.append(user("p2", 20));
  h.append(assistant([call("b", "read", { path: "b.ts" })], 21));
  h.append(result("b", "read", out("b"), 22));
  const closing = assistant([text("done 2")], 23);
  h.append(closing);
  return closing;
}

const keeperEntries = (sm: SessionManager, customType: string) =>
  sm.getBranch().filter((e) => e.type === "custom" && (e as { customType?: string }).customType === customType).map((e) => (e as { data: unknown }).data);
const settle = () => new Promise<void>((r) => setImmediate(r));

describe("pruning runtime under concurrency", () => {
  test("two flushes requested at once: one runs, the other queues behind it; no batch summarized twice, flushes numbered in order", async () => {
    const h = harness();
    const closing = twoPrompts(h);
    h.runtime.onAssistantMessageEnd(closing, h.ctx);
    h.runtime.onAssistantMessageEnd(closing, h.ctx);
    const manual = h.runtime.flushNow(h.ctx);
    await settle();
    expect(h.runtime.busy()).toBe(true);
    // One flush is summarizing both batches (one model call each); the others wait.
    expect(h.model.gates).toHaveLength(2);
    h.model.releaseAll();
    await manual;
    while (h.runtime.busy()) await settle();
    expect(h.model.gates).toHaveLength(2);
    const summaries = keeperEntries(h.sm, CUSTOM_TYPE_SUMMARY) as Array<{ batchKey: string }>;
    expect(summaries.map((s) => s.batchKey).sort()).toEqual(["batch:a@11", "batch:b@21"]);
    const seqs = (keeperEntries(h.sm, CUSTOM_TYPE_FRONTIER) as Array<{ flushSeq: number }>).map((f) => f.flushSeq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(h.runtime.state().frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@21#0"]);
    // What was persisted is what the runtime holds.
    expect(restoreReconciled(h.sm.getBranch()).state).toEqual(JSON.parse(JSON.stringify(h.runtime.state())));
  });

  test("a flush racing a compaction apply: the flush commits after it, and nothing outside the new context is kept", async () => {
    const h = harness();
    const closing = twoPrompts(h);
    h.runtime.onAssistantMessageEnd(closing, h.ctx);
    await settle();
    expect(h.model.gates).toHaveLength(2);
    // Pi compacts while the summarizer works: everything before prompt 2 leaves the context.
    const keep = h.sm.getBranch().find((e) => e.type === "message" && (e as { message: { timestamp?: number } }).message.timestamp === 20)!;
    h.sm.appendCompaction("summary of prompt 1", keep.id, 5_000);
    h.runtime.afterCompaction(h.ctx);
    h.model.releaseAll();
    while (h.runtime.busy()) await settle();
    const live = liveOccurrenceKeys(h.sm.buildSessionProjection().messages as ContextMessage[]);
    const state = h.runtime.state();
    expect(state.frontier.stubbedKeys).toEqual(["b@21#0"]);
    expect(state.frontier.stubbedKeys.filter((k) => !live.has(k))).toEqual([]);
    expect(Object.values(state.summaries).flatMap((r) => r.coveredKeys).filter((k) => !live.has(k))).toEqual([]);
    // The next render stubs prompt 2's output, and a restart restores the same thing.
    const rendered = h.runtime.render({ type: "context", messages: h.sm.buildSessionProjection().messages } as never, h.ctx);
    expect(JSON.stringify(rendered?.messages)).toContain("recall with keeper_recall ref=b@21#0");
    const restarted = harness(h.sm);
    expect(restarted.runtime.state().frontier.stubbedKeys).toEqual(["b@21#0"]);
  });

  test("a restart while a summary is in flight: nothing half-written; the restarted session prunes the same batches", async () => {
    const h = harness();
    const closing = twoPrompts(h);
    h.runtime.onAssistantMessageEnd(closing, h.ctx);
    await settle();
    expect(h.model.gates).toHaveLength(2);
    const before = h.sm.getBranch().length;
    // The process dies here (the in-flight flush never returns). A new runtime restores from the file.
    const restarted = harness(h.sm);
    expect(h.sm.getBranch().length).toBe(before);
    expect(restarted.runtime.diagnostics()).toEqual([]);
    expect(restarted.runtime.state().frontier.flushSeq).toBe(0);
    const done = restarted.runtime.flushNow(restarted.ctx);
    await settle();
    restarted.model.releaseAll();
    await done;
    expect(restarted.runtime.state().frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@21#0"]);
    // An orderly shutdown instead: the summarizer is aborted, the flush commits deterministic summaries.
    const h2 = harness();
    h2.runtime.onAssistantMessageEnd(twoPrompts(h2), h2.ctx);
    await settle();
    await h2.runtime.shutdown();
    expect(h2.runtime.state().frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@21#0"]);
    expect(Object.values(h2.runtime.state().summaries).map((r) => r.summary.source)).toEqual(["extractive", "extractive"]);
    expect(harness(h2.sm).runtime.state()).toEqual(JSON.parse(JSON.stringify(h2.runtime.state())));
  });

  test("/keeper now during a tool loop: earlier batches of the loop are stubbed, the batch the model has not seen stays raw, the loop's assistant turns are untouched", async () => {
    const h = harness();
    h.append(user("p1", 10));
    h.append(assistant([call("a", "read", { path: "a.ts" })], 11));
    h.append(result("a", "read", out("a"), 12));
    h.append(assistant([call("b", "read", { path: "b.ts" })], 13));
    h.append(result("b", "read", out("b"), 14));
    h.append(assistant([call("c", "read", { path: "c.ts" })], 15));
    h.append(result("c", "read", out("c"), 16));
    // The loop is still running (the model has not answered c yet) when the user asks for a flush.
    const done = h.runtime.flushNow(h.ctx);
    await settle();
    h.model.releaseAll();
    const report = await done;
    expect(report?.trigger).toBe("manual");
    expect(h.runtime.state().frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@13#0"]);
    const messages = h.sm.buildSessionProjection().messages as ContextMessage[];
    const rendered = h.runtime.render({ type: "context", messages } as never, h.ctx)!.messages;
    messages.forEach((m, i) => {
      if (m.role === "assistant") expect(rendered[i]).toBe(m);
    });
    expect(rendered.at(-1)).toBe(messages.at(-1)!);
    expect(JSON.stringify(rendered.at(-1))).toContain("c output line");
  });
});
