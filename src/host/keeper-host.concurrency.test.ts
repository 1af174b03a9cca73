/**
 * Concurrency of the keeper host (issue #14), over a real in-memory Pi SessionManager and a
 * summarizer model the test releases by hand: two flushes requested at once, a flush racing a
 * compaction apply, a restart while a summary is in flight, `/keeper now` during a tool loop.
 * The host is driven only through its Pi-facing handlers; its state is read back from what it
 * persisted (`restoreReconciled` over the branch) and from what it renders.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONFIG_DIR_NAME, SessionManager, type ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { keeperRender } from "../engine/index.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { CUSTOM_TYPE_FLUSH, type FlushRecord, type KeeperState } from "../state/schema.ts";
import { restoreReconciled } from "../state/torn-flush.ts";
import type { SummaryStream } from "../summarize/summary-call.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { deferred, type Deferred } from "../../test/support/compaction/fake-pi.ts";
import { resultMessage, scriptedStream } from "../../test/support/summarize/fake-model.ts";
import { driveKeeper, type DrivenKeeper } from "../../test/support/host/keeper-driver.ts";

const root = mkdtempSync(join(tmpdir(), "keeper-concurrency-"));
const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
process.env.PI_CODING_AGENT_DIR = join(root, "agent"); // no user settings leak in
afterAll(() => {
  if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
  else process.env.PI_CODING_AGENT_DIR = previousAgentDir;
  rmSync(root, { recursive: true, force: true });
});

// Small batches count, no budget flush, the model summarizer, no cache gate (every proposal applies).
const SETTINGS = {
  pruning: { minBatchChars: 100, budgetTrigger: { enabled: false } },
  summarizer: { mode: "model" },
  cache: { discipline: false },
};
const project = join(root, "project");
mkdirSync(join(project, CONFIG_DIR_NAME), { recursive: true });
writeFileSync(join(project, CONFIG_DIR_NAME, "settings.json"), JSON.stringify({ contextKeeper: SETTINGS }));
const RENDER_SETTINGS: KeeperSettings = {
  ...DEFAULT_SETTINGS,
  pruning: { ...DEFAULT_SETTINGS.pruning, minBatchChars: 100, budgetTrigger: { ...DEFAULT_SETTINGS.pruning.budgetTrigger, enabled: false } },
  summarizer: { ...DEFAULT_SETTINGS.summarizer, mode: "model" },
  cache: { ...DEFAULT_SETTINGS.cache, discipline: false },
};
const MODEL = { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" };
const out = (name: string) => `${name} output line\n`.repeat(40);

/**
 * A summarizer whose calls wait until the test releases them (each call gets its own gate).
 * `reported`: the provider's first event (with the usage so far, as pi-ai's partial message) comes before the wait.
 */
function gatedModel(reported?: { input: number; cost: number }) {
  const gates: Deferred<void>[] = [];
  const streamSimple = (): SummaryStream => {
    const gate = deferred<void>();
    gates.push(gate);
    const inner = scriptedStream(resultMessage(`summary ${gates.length}`));
    return {
      async *[Symbol.asyncIterator]() {
        if (reported) yield { type: "start", partial: resultMessage("", { input: reported.input, output: 0, cost: reported.cost }) } as { type: string };
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
  ctx: ExtensionCommandContext;
  host: DrivenKeeper;
  model: ReturnType<typeof gatedModel>;
  notices: string[];
  append(m: ContextMessage): string;
}

/** A host started on `sm` (a restart when `sm` already holds a session). */
function harness(sm = SessionManager.inMemory(project), model = gatedModel(), sessionModel: Record<string, unknown> = MODEL): Harness {
  const notices: string[] = [];
  const ctx = {
    sessionManager: sm,
    model: sessionModel,
    modelRegistry: { streamSimple: model.streamSimple, find: () => undefined },
    getContextUsage: () => ({ tokens: 10_000, contextWindow: 200_000, percent: 5 }),
    hasUI: true,
    ui: { notify: (t: string) => void notices.push(t), setStatus: () => {} },
    cwd: project,
    isProjectTrusted: () => true,
  } as unknown as ExtensionCommandContext;
  const pi = {
    appendEntry: (type: string, data: unknown) => void sm.appendCustomEntry(type, data),
    getThinkingLevel: () => "off",
    getActiveTools: () => ["read"],
    setActiveTools: () => {},
  };
  const host = driveKeeper(pi as never, { now: () => 1_000 });
  host.onSessionStart(ctx);
  return { sm, ctx, host, model, notices, append: (m) => sm.appendMessage(m as never) };
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
const persisted = (sm: SessionManager): KeeperState => restoreReconciled(sm.getBranch()).state;
const contextOf = (sm: SessionManager) => sm.buildSessionProjection().messages as ContextMessage[];
/** What the host sends for the session's context (its own messages when it changes nothing). */
const rendered = (h: Harness) => {
  const messages = contextOf(h.sm);
  return h.host.onContext({ type: "context", messages } as never, h.ctx)?.messages ?? messages;
};
/** The render the persisted state gives: equal to the host's when memory and file agree. */
const renderedFromFile = (sm: SessionManager) => keeperRender({ messages: contextOf(sm), state: persisted(sm), settings: RENDER_SETTINGS, model: MODEL });
async function idle(h: Harness): Promise<void> {
  while (h.host.busy()) await settle();
}

describe("keeper host under concurrency", () => {
  test("two flushes requested at once: one runs, the other queues behind it; no batch summarized twice, flushes numbered in order", async () => {
    const h = harness();
    const closing = twoPrompts(h);
    h.host.onMessageEnd(closing, h.ctx);
    h.host.onMessageEnd(closing, h.ctx);
    const manual = h.host.onKeeperCommand("now", h.ctx);
    await settle();
    expect(h.host.busy()).toBe(true);
    // One flush is summarizing both batches (one model call each); the others wait.
    expect(h.model.gates).toHaveLength(2);
    h.model.releaseAll();
    await manual;
    await idle(h);
    expect(h.model.gates).toHaveLength(2);
    const records = keeperEntries(h.sm, CUSTOM_TYPE_FLUSH) as FlushRecord[];
    expect(records.flatMap((r) => r.summaries).map((s) => s.batchKey).sort()).toEqual(["batch:a@11", "batch:b@21"]);
    const seqs = records.map((r) => r.frontier?.flushSeq ?? r.frontierDelta!.flushSeq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(persisted(h.sm).frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@21#0"]);
    // What was persisted is what the host holds: both render the same request.
    expect(rendered(h)).toEqual(renderedFromFile(h.sm));
  });

  test("a flush racing a compaction apply: the flush commits after it, and nothing outside the new context is kept", async () => {
    const h = harness();
    const closing = twoPrompts(h);
    h.host.onMessageEnd(closing, h.ctx);
    await settle();
    expect(h.model.gates).toHaveLength(2);
    // Pi compacts while the summarizer works: everything before prompt 2 leaves the context.
    const keep = h.sm.getBranch().find((e) => e.type === "message" && (e as { message: { timestamp?: number } }).message.timestamp === 20)!;
    h.sm.appendCompaction("summary of prompt 1", keep.id, 5_000);
    h.host.onSessionCompact(h.ctx);
    h.model.releaseAll();
    await idle(h);
    const live = liveOccurrenceKeys(contextOf(h.sm));
    const state = persisted(h.sm);
    expect(state.frontier.stubbedKeys).toEqual(["b@21#0"]);
    expect(Object.values(state.summaries).flatMap((r) => r.coveredKeys).filter((k) => !live.has(k))).toEqual([]);
    // The next render stubs prompt 2's output, as the persisted state does, and a restart renders the same.
    const now = rendered(h);
    expect(JSON.stringify(now)).toContain("keeper_recall ref=b@21#0");
    expect(now).toEqual(renderedFromFile(h.sm));
    expect(rendered(harness(h.sm))).toEqual(now);
  });

  test("a compaction applied without session_compact while the summarizer runs: the plan still reads the context as it is", async () => {
    const h = harness();
    const closing = twoPrompts(h);
    h.host.onMessageEnd(closing, h.ctx);
    await settle();
    const keep = h.sm.getBranch().find((e) => e.type === "message" && (e as { message: { timestamp?: number } }).message.timestamp === 20)!;
    h.sm.appendCompaction("summary of prompt 1", keep.id, 5_000); // a turn_end draft Pi applied: no session_compact
    h.model.releaseAll();
    await idle(h);
    const state = persisted(h.sm);
    expect(state.frontier.stubbedKeys).toEqual(["b@21#0"]);
    expect(Object.keys(state.summaries)).toEqual(["batch:b@21"]);
  });

  test("a restart while a summary is in flight: nothing half-written; the restarted session prunes the same batches", async () => {
    const h = harness();
    const closing = twoPrompts(h);
    h.host.onMessageEnd(closing, h.ctx);
    await settle();
    expect(h.model.gates).toHaveLength(2);
    const before = h.sm.getBranch().length;
    // The process dies here (the in-flight flush never returns). A new host restores from the file.
    const restarted = harness(h.sm);
    expect(h.sm.getBranch().length).toBe(before);
    expect(restarted.notices).toEqual([]);
    await restarted.host.onKeeperCommand("", restarted.ctx);
    expect(restarted.notices.at(-1)).toContain("read cleanly; every copy of a large output written");
    expect(persisted(h.sm).frontier.flushSeq).toBe(0);
    const done = restarted.host.onKeeperCommand("now", restarted.ctx);
    await settle();
    restarted.model.releaseAll();
    await done;
    expect(persisted(h.sm).frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@21#0"]);
    // An orderly shutdown instead: the summarizer is aborted, the flush commits deterministic summaries.
    const h2 = harness();
    h2.host.onMessageEnd(twoPrompts(h2), h2.ctx);
    await settle();
    await h2.host.onSessionShutdown();
    const state = persisted(h2.sm);
    expect(state.frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@21#0"]);
    expect(Object.values(state.summaries).map((r) => r.summary.source)).toEqual(["extractive", "extractive"]);
    expect(rendered(harness(h2.sm))).toEqual(rendered(h2));
  });

  test("/keeper now during a tool loop: earlier batches of the loop are stubbed, its last steps (the one the model has not seen included) stay raw, the loop's assistant turns are untouched", async () => {
    const h = harness();
    h.append(user("p1", 10));
    for (const [i, id] of ["a", "b", "d", "e", "c"].entries()) {
      h.append(assistant([call(id, "read", { path: `${id}.ts` })], 11 + 2 * i));
      h.append(result(id, "read", out(id), 12 + 2 * i));
    }
    // The loop is still running (the model has not answered c yet) when the user asks for a flush:
    // e and c are its last two steps (`loopFlush.keepRecentSteps`), kept raw.
    const done = h.host.onKeeperCommand("now", h.ctx);
    // The summarizer asks the model for one batch at a time: release each as it comes (a, b, d).
    for (let i = 0; i < 3; i++) {
      await settle();
      h.model.releaseAll();
    }
    await done;
    expect(h.model.gates).toHaveLength(3);
    expect(h.notices.at(-1)).toContain("last flush (/keeper now");
    expect(persisted(h.sm).frontier.stubbedKeys.sort()).toEqual(["a@11#0", "b@13#0", "d@15#0"]);
    const messages = contextOf(h.sm);
    const sent = h.host.onContext({ type: "context", messages } as never, h.ctx)!.messages;
    messages.forEach((m, i) => {
      if (m.role === "assistant") expect(sent[i]).toBe(m);
    });
    expect(sent.at(-1)).toBe(messages.at(-1)!);
    expect(JSON.stringify(sent.at(-1))).toContain("c output line");
    expect(JSON.stringify(sent.at(-3))).toContain("e output line");
    expect(JSON.stringify(sent.at(-5))).toContain("output pruned");
  });
});

describe("summary calls stopped at shutdown are paid for", () => {
  test("the usage the provider reported before the abort is in /keeper stats, after a restart too", async () => {
    const h = harness(undefined, gatedModel({ input: 2_000, cost: 0.057 }));
    h.host.onMessageEnd(twoPrompts(h), h.ctx);
    await settle();
    expect(h.model.gates).toHaveLength(2);
    await h.host.onSessionShutdown();
    const state = persisted(h.sm);
    expect(Object.values(state.summaries).map((r) => r.summary.source)).toEqual(["extractive", "extractive"]);
    expect(state.stats.summarizerCost).toBeCloseTo(0.114, 10);
    expect(state.stats.summarizerInputTokens).toBe(4_000);
    const restarted = harness(h.sm);
    await restarted.host.onKeeperCommand("stats", restarted.ctx);
    expect(restarted.notices.at(-1)).toContain("summary calls to a model: 4,000 input + 0 output tokens, $0.114");
  });

  test("stopped before the provider reported anything: the estimate of what was sent, at the model's input price", async () => {
    const priced = { ...MODEL, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } };
    const h = harness(undefined, gatedModel(), priced);
    h.host.onMessageEnd(twoPrompts(h), h.ctx);
    await settle();
    await h.host.onSessionShutdown();
    const stats = persisted(h.sm).stats;
    expect(stats.summarizerInputTokens).toBeGreaterThan(2 * 200); // two prompts of 40 output lines each
    expect(stats.summarizerCost).toBeCloseTo((stats.summarizerInputTokens * 3) / 1_000_000, 12);
  });
});
