/**
 * What a background summary cost when it was never applied: recorded in one spend entry per
 * job (`spend-entry.ts`) — superseded, staled, failed, a late job's upgrade, left waiting or in
 * flight at shutdown — and never for an applied one (Pi's compaction entry carries its usage).
 * Driven through the fake Pi host (manual timers, a real in-memory SessionManager).
 */
import { describe, expect, test } from "bun:test";
import type { AnyAsyncCompactionAdapter } from "./adapter.ts";
import type { ReadyCompaction } from "./job-reducer.ts";
import { prepareCompaction } from "./prepare.ts";
import type { CompactionPreparation } from "./primitives.ts";
import { SPEND_ENTRY_TYPE, spendOf, unappliedSpendOf, type SpendEntry } from "./spend-entry.ts";
import { piCompactionPrimitives } from "../host/compaction-runtime.ts";
import { deferred, FakeHost, flush, type Deferred } from "../../test/support/compaction/fake-pi.ts";
import { atThreshold, setup, startJob, TURN } from "../../test/support/compaction/wiring-setup.ts";
import { SessionBuilder } from "../../test/support/compaction/session-builder.ts";

/** Pi's usage of one summary request: `input` prompt tokens, `output` summary tokens, at $3 / $15 per million. */
function piUsage(input: number, output: number) {
  const cost = { input: (input * 3) / 1e6, output: (output * 15) / 1e6, cacheRead: 0, cacheWrite: 0 };
  return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { ...cost, total: cost.input + cost.output } };
}

/** A stream as pi-ai returns it: events pushed by the test, then the final message. */
class FakeStream {
  private readonly events: unknown[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private readonly final: Deferred<{ usage: ReturnType<typeof piUsage>; stopReason: string }> = deferred();
  push(event: unknown): void {
    this.events.push(event);
    this.wake?.();
  }
  end(usage: ReturnType<typeof piUsage>, stopReason = "stop"): void {
    this.ended = true;
    this.final.resolve({ usage, stopReason });
    this.wake?.();
  }
  result() {
    return this.final.promise;
  }
  async *[Symbol.asyncIterator]() {
    for (;;) {
      if (this.events.length > 0) yield this.events.shift();
      else if (this.ended) return;
      else await new Promise<void>((r) => (this.wake = r));
    }
  }
}

/** An adapter whose runs make one summary call each through the host's meter (`RunOptions.meter`), as the default adapter does. */
function meteredAdapter() {
  const runs: { prepared: CompactionPreparation; stream: FakeStream; signal: AbortSignal; done: Deferred<ReadyCompaction> }[] = [];
  const adapter: AnyAsyncCompactionAdapter = {
    id: "test",
    label: "test compaction",
    prepare: ({ branch, settings }) => prepareCompaction(branch, settings, piCompactionPrimitives),
    createSnapshot: (prepared: CompactionPreparation, context) => ({ ...context, firstKeptEntryId: prepared.firstKeptEntryId, promptVersion: "v-test" }),
    run: async (prepared: CompactionPreparation, { signal, meter }) => {
      const stream = new FakeStream();
      const done = deferred<ReadyCompaction>();
      runs.push({ prepared, stream, signal, done });
      const call = meter!.wrap((_m: never, _c: never) => stream);
      await call({ cost: { input: 3 } } as never, { systemPrompt: "s".repeat(400), messages: [] } as never);
      return done.promise;
    },
    toCompaction: (r: ReadyCompaction) => r,
  };
  /** Run `i`'s call ends with `usage`, and the run with a summary carrying it. */
  const finish = async (i: number, usage: ReturnType<typeof piUsage>) => {
    const r = runs[i]!;
    r.stream.end(usage);
    await flush();
    r.done.resolve({ summary: `summary of run ${i}`, firstKeptEntryId: r.prepared.firstKeptEntryId, tokensBefore: r.prepared.tokensBefore, details: { readFiles: [], modifiedFiles: [] }, usage });
    await flush();
  };
  return { adapter, runs, finish };
}

function meteredHost(opts: { stallMs?: number } = {}) {
  const builder = new SessionBuilder();
  for (let i = 0; i < 6; i++) builder.applyAll(TURN);
  const m = meteredAdapter();
  const host = new FakeHost({ sm: builder.sm, adapter: m.adapter, ...(opts.stallMs !== undefined ? { stallMs: opts.stallMs } : {}) });
  return { host, ...m };
}

const spendEntries = (host: FakeHost): SpendEntry[] => host.sm.getEntries().flatMap((e) => spendOf(e) ?? []);
const compactionUsage = (host: FakeHost) => host.sm.getEntries().flatMap((e) => (e.type === "compaction" ? [(e as { usage?: unknown }).usage] : []));

describe("the spend of background summaries never applied", () => {
  test("a ready summary staled by a model change: its calls' usage is recorded, once (the run's usage on its result, an adapter without the meter)", async () => {
    const { host, finish, runs } = setup();
    await startJob(host);
    runs[0]!.done.resolve({ summary: "s0", firstKeptEntryId: runs[0]!.prepared.firstKeptEntryId, tokensBefore: 1, usage: piUsage(40_000, 2_000) });
    await flush();
    expect(host.state().kind).toBe("ready");
    expect(spendEntries(host)).toEqual([]);
    host.model = { ...host.model, id: "m2" };
    await host.fire("model_select", { model: host.model });
    expect(host.state()).toMatchObject({ kind: "stale", reason: "model_changed" });
    expect(spendEntries(host)).toEqual([{ version: 1, jobId: "job-1", reason: "model_changed", calls: 1, inputTokens: 40_000, outputTokens: 2_000, cost: 0.15 }]);
    await host.fire("session_shutdown", { reason: "quit" });
    expect(spendEntries(host)).toHaveLength(1);
    void finish;
  });

  test("an applied summary records nothing: Pi's compaction entry carries its usage", async () => {
    const { host, finish } = meteredHost();
    await startJob(host);
    await finish(0, piUsage(30_000, 1_000));
    atThreshold(host);
    await host.turnEnd(); // the ready summary goes out as the turn_end draft
    await host.fire("agent_end", { messages: [] });
    expect(host.state()).toMatchObject({ kind: "idle", lastJobId: "job-1" });
    expect(compactionUsage(host)).toEqual([piUsage(30_000, 1_000)]);
    await host.fire("session_shutdown", { reason: "quit" });
    expect(spendEntries(host)).toEqual([]);
  });

  test("staled while waiting, then the newer job in flight at shutdown: both recorded, the one in flight with the usage its stream reported so far", async () => {
    const { host, finish, runs } = meteredHost();
    await startJob(host);
    await finish(0, piUsage(30_000, 1_000));
    expect(host.state().kind).toBe("ready");
    host.thinkingLevel = "high";
    await host.fire("thinking_level_select", { level: "high" });
    await host.turnEnd(); // a newer job replaces the stale one
    expect(host.state()).toMatchObject({ kind: "pending", job: { jobId: "job-2" } });
    expect(spendEntries(host).map((e) => [e.jobId, e.reason, e.inputTokens, e.outputTokens])).toEqual([["job-1", "thinking_changed", 30_000, 1_000]]);
    await flush();
    // Anthropic reports the prompt's usage at message start; the summary is still streaming.
    runs[1]!.stream.push({ type: "start", partial: { usage: piUsage(50_000, 0) } });
    await flush();
    await host.fire("session_shutdown", { reason: "quit" });
    expect(runs[1]!.signal.aborted).toBe(true);
    expect(spendEntries(host).map((e) => [e.jobId, e.reason, e.inputTokens, e.outputTokens, e.estimated])).toEqual([
      ["job-1", "thinking_changed", 30_000, 1_000, undefined],
      ["job-2", "shutdown", 50_000, 0, undefined],
    ]);
    // The aborted call ends later: nothing more is written.
    await finish(1, piUsage(50_000, 10));
    expect(spendEntries(host)).toHaveLength(2);
    expect(unappliedSpendOf(host.sm.getEntries())).toEqual({ jobs: 2, calls: 2, inputTokens: 80_000, outputTokens: 1_000, cost: piUsage(30_000, 1_000).cost.total + piUsage(50_000, 0).cost.total, estimated: false });
  });

  test("a call stopped before the provider reported anything: the estimate of what was sent, marked estimated", async () => {
    const { host } = meteredHost();
    await startJob(host);
    await flush();
    await host.fire("session_shutdown", { reason: "quit" });
    expect(spendEntries(host)).toEqual([{ version: 1, jobId: "job-1", reason: "shutdown", calls: 1, inputTokens: 100, outputTokens: 0, cost: (100 * 3) / 1e6, estimated: true }]);
  });

  test("a run that fails, and a run that ends after its job was staled: recorded when they end", async () => {
    const { host, runs } = meteredHost();
    await startJob(host);
    await flush();
    runs[0]!.stream.end(piUsage(20_000, 0), "error");
    runs[0]!.done.reject(new Error("Summarization failed: overloaded"));
    await flush();
    expect(host.state()).toMatchObject({ kind: "failed" });
    expect(spendEntries(host).map((e) => [e.jobId, e.reason, e.inputTokens])).toEqual([["job-1", "failed", 20_000]]);

    await host.turnEnd(); // a new job starts (usage still in the window)
    expect(host.state()).toMatchObject({ kind: "pending", job: { jobId: "job-2" } });
    await flush();
    host.thinkingLevel = "high";
    await host.fire("thinking_level_select", { level: "high" });
    expect(host.state()).toMatchObject({ kind: "stale", reason: "thinking_changed" });
    expect(runs[1]!.signal.aborted).toBe(true);
    // The aborted call reports what it had used; the run ends with Pi's aborted result.
    runs[1]!.stream.end(piUsage(25_000, 300), "aborted");
    runs[1]!.done.reject(new Error("aborted"));
    await flush();
    expect(spendEntries(host).map((e) => [e.jobId, e.reason, e.inputTokens, e.outputTokens])).toEqual([
      ["job-1", "failed", 20_000, 0],
      ["job-2", "thinking_changed", 25_000, 300],
    ]);
  });

  test("left waiting at shutdown and applied after a resume: recorded at shutdown, Pi's compaction entry then carries no usage (counted once)", async () => {
    const { host, finish } = meteredHost();
    await startJob(host);
    await finish(0, piUsage(30_000, 1_000));
    await host.fire("session_shutdown", { reason: "quit" });
    expect(spendEntries(host).map((e) => [e.jobId, e.reason])).toEqual([["job-1", "cancelled"]]);
    const again = new FakeHost({ sm: host.sm, adapter: meteredAdapter().adapter });
    again.idle = false;
    await again.fire("session_start", { reason: "resume" });
    expect(again.state()).toMatchObject({ kind: "ready", job: { jobId: "job-1" } });
    atThreshold(again);
    await again.turnEnd();
    await again.fire("agent_end", { messages: [] });
    expect(again.state()).toMatchObject({ kind: "idle", lastJobId: "job-1" });
    expect(compactionUsage(again)).toEqual([undefined]);
    expect(unappliedSpendOf(again.sm.getEntries()).cost).toBeCloseTo(piUsage(30_000, 1_000).cost.total, 12);
  });

  test("a late job's summary upgrades the digest Pi applied (no usage on it): its calls are recorded as the upgrade is written", async () => {
    const { host, finish } = meteredHost({ stallMs: 1_000 });
    await startJob(host);
    host.tokens = 97_000; // no room: Pi compacts now, the job is late past the stall budget
    const compaction = host.runPiCompaction(undefined, "threshold");
    await flush();
    host.timers.advance(1_000);
    expect(await compaction).toBe("extension");
    expect(host.controller.isLate("job-1")).toBe(true);
    expect(compactionUsage(host)).toEqual([undefined]);
    await finish(0, piUsage(45_000, 1_500));
    expect(host.sm.getEntries().some((e) => e.type === "custom" && e.customType === "context-keeper/compaction-upgrade")).toBe(true);
    expect(spendEntries(host).map((e) => [e.jobId, e.reason, e.inputTokens, e.outputTokens])).toEqual([["job-1", "late", 45_000, 1_500]]);
  });

  test("the spend entry's customType is the keeper's (the report reads the file's keeper entries)", () => {
    expect(SPEND_ENTRY_TYPE.startsWith("context-keeper/")).toBe(true);
  });
});
