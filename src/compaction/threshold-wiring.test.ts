/**
 * Pi about to compact while a job is pending (`session_before_compact`): cancel with room, a
 * bounded wait without room, overflow never cancelled; the ready callback stays out of the way
 * while the hook waits. FakeHost: window 100k, reserve 10k, wait bound 5 s (manual timers).
 */
import { describe, expect, test } from "bun:test";
import { flush } from "../../test/support/compaction/fake-pi.ts";
import { setup, startJob } from "../../test/support/compaction/wiring-setup.ts";

describe("a pending job when Pi is about to compact", () => {
  test("threshold with room: Pi's compaction is cancelled, the job applies at the next turn end", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.tokens = 91_000; // over 100k - 10k, and 91k + 4,096 fits the window
    expect(await host.runPiCompaction(undefined, "threshold")).toBe("cancelled");
    expect(host.state().kind).toBe("pending");
    expect(host.events).toContainEqual({ kind: "at_compact", jobId: "job-1", trigger: "threshold", decision: "cancel", tokens: 91_000 });
    expect(host.sm.getBranch().some((e) => e.type === "compaction")).toBe(false);
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(0); // busy, with room: no abort
    const r = await host.turnEnd();
    expect(r.entries.map((e: { type: string }) => e.type)).toEqual(["compaction"]);
    await host.fire("agent_end", { messages: [] }); // the next hook confirms the draft
    expect(host.state().kind).toBe("idle");
    expect(host.notes).toEqual(["test compaction: applied a background summary"]);
  });

  test("threshold without room: waits for the job and hands it over when it validates", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.tokens = 97_000; // 97k + 4,096 > 100k
    const compaction = host.runPiCompaction(undefined, "threshold");
    await flush();
    expect(host.state().kind).toBe("pending");
    host.timers.advance(1_500);
    finish(0);
    expect(await compaction).toBe("extension");
    expect(host.compactCalls).toHaveLength(0); // the ready callback did not ask Pi again
    expect(host.state().kind).toBe("idle");
    const waited = host.events.find((e) => e.kind === "at_compact");
    expect(waited).toMatchObject({ decision: "wait", waitEnd: "settled", waitedMs: 1_500 });
    const applied = host.sm.getBranch().filter((e) => e.type === "compaction");
    expect(applied.map((e) => (e.type === "compaction" ? e.summary : ""))).toEqual(["summary of run 0"]);
  });

  test("the wait is bounded: past it, the job is staled and Pi compacts on its own", async () => {
    const { host, runs } = setup();
    await startJob(host);
    host.tokens = 99_000;
    const compaction = host.runPiCompaction(undefined, "threshold");
    await flush();
    host.timers.advance(4_999);
    await flush();
    expect(host.state().kind).toBe("pending");
    host.timers.advance(1);
    expect(await compaction).toBe("default");
    expect(host.state()).toMatchObject({ kind: "stale", reason: "sync_fallback" });
    expect(runs[0].signal.aborted).toBe(true);
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "at_compact", decision: "wait", waitEnd: "timeout", waitedMs: 5_000 }));
  });

  test("Pi aborting its compaction ends the wait at once and keeps the job", async () => {
    const { host } = setup();
    await startJob(host);
    host.tokens = 99_000;
    const abort = new AbortController();
    const branchEntries = host.sm.getBranch();
    const before = host.fire("session_before_compact", { preparation: { tokensBefore: 99_000, settings: host.settings }, branchEntries, reason: "threshold", willRetry: false, signal: abort.signal });
    await flush();
    abort.abort();
    expect(await before).toBeUndefined();
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "at_compact", decision: "wait", waitEnd: "aborted", waitedMs: 0 }));
    expect(host.state().kind).toBe("pending"); // Pi's compaction is aborted too: nothing replaces the job
  });

  test("an overflow is never cancelled, even with room: it waits for the job", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.tokens = 60_000;
    const compaction = host.runPiCompaction(undefined, "overflow");
    await flush();
    finish(0);
    expect(await compaction).toBe("extension");
    expect(host.events.find((e) => e.kind === "at_compact")).toMatchObject({ trigger: "overflow", decision: "wait" });
  });

  test("a job that fails during the wait: Pi compacts on its own", async () => {
    const { host, runs } = setup();
    await startJob(host);
    host.tokens = 99_000;
    const compaction = host.runPiCompaction(undefined, "threshold");
    await flush();
    runs[0].done.reject(new Error("model down"));
    expect(await compaction).toBe("default");
    expect(host.state()).toMatchObject({ kind: "failed", error: "model down" });
  });
});
