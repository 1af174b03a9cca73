/** The wiring against a fake Pi host: apply paths, invalidations and races. */
import { describe, expect, test } from "bun:test";
import { buildSessionContext } from "@earendil-works/pi-coding-agent";
import { flush } from "../../test/support/compaction/fake-pi.ts";
import { piCompactionPrimitives } from "../host/compaction-runtime.ts";
import { DIGEST_HEADING } from "./catch-up.ts";
import { prepareCompaction } from "./prepare.ts";
import { atThreshold, setup, startJob, TURN } from "../../test/support/compaction/wiring-setup.ts";

describe("starting", () => {
  test("turn_end outside the window starts nothing; inside starts one job", async () => {
    const { host, runs } = setup();
    host.tokens = 50_000; // == floor(100k * 0.5): not above the threshold
    await host.turnEnd();
    expect(host.state().kind).toBe("idle");
    host.tokens = 90_001; // above window - reserve: Pi's own compaction territory
    await host.turnEnd();
    expect(host.state().kind).toBe("idle");
    await startJob(host);
    expect(runs).toHaveLength(1);
    expect(host.status.get("async-compaction:test")).toBe("test compaction: preparing");
    await host.turnEnd(); // pending jobs are never replaced
    expect(runs).toHaveLength(1);
  });
});

describe("status line", () => {
  test("sent only when its text changes: nothing while idle, preparing, ready, cleared once", async () => {
    const { host, finish } = setup();
    host.tokens = 1_000; // below the window: hooks run, no job
    await host.turnEnd();
    await host.fire("agent_end", { messages: [] });
    expect(host.statusCalls).toEqual([]);
    await startJob(host);
    await host.turnEnd(); // still pending: same text, not sent again
    finish(0);
    await flush();
    atThreshold(host);
    await host.turnEnd(); // draft handed over (status stays "ready" until confirmed)
    await host.fire("agent_end", { messages: [] }); // confirmed: cleared
    await host.fire("agent_end", { messages: [] });
    const key = "async-compaction:test";
    expect(host.statusCalls).toEqual([
      { key, text: "test compaction: preparing" },
      { key, text: "test compaction: ready" },
      { key, text: undefined },
    ]);
  });
});

describe("apply paths", () => {
  test("turn_end returns a compaction draft caught up to Pi's cut now: the gap digested, the tail after it verbatim", async () => {
    const { host, builder, finish, runs } = setup();
    await startJob(host);
    const snapshotLeaf = host.sm.getLeafId();
    finish(0);
    await flush();
    expect(host.state().kind).toBe("ready");
    expect(host.compactCalls).toHaveLength(0); // busy: no ctx.compact()

    builder.applyAll(TURN); // appended after the snapshot
    const before = buildSessionContext(host.sm.getBranch()).messages;
    const jobCut = runs[0].prepared.firstKeptEntryId;
    const branch = host.sm.getBranch();
    expect(branch.findIndex((e) => e.id === snapshotLeaf)).toBeGreaterThan(branch.findIndex((e) => e.id === jobCut));
    // Where Pi itself would cut now (prepare.ts is parity-tested against Pi): later than the job's cut.
    const piCut = prepareCompaction(branch, host.settings, piCompactionPrimitives)!.firstKeptEntryId;
    const keptFrom = branch.findIndex((e) => e.id === piCut);
    expect(keptFrom).toBeGreaterThan(branch.findIndex((e) => e.id === jobCut));

    atThreshold(host);
    const result = await host.turnEnd();
    expect(result.entries).toHaveLength(1);
    const draft = result.entries[0];
    expect(draft).toMatchObject({ type: "compaction", firstKeptEntryId: piCut });
    expect(draft.summary.startsWith(`summary of run 0\n\n---\n\n${DIGEST_HEADING}\n\n`)).toBe(true);
    expect(draft.details.readFiles).toEqual(["r.ts"]);
    expect(draft.details.contextKeeperAsyncCompaction).toMatchObject({ jobId: "job-1", firstKeptEntryId: jobCut });
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "catch_up", jobId: "job-1", fromEntryId: jobCut, toEntryId: piCut }));

    const after = buildSessionContext(host.sm.getBranch()).messages;
    expect((after[0] as { role: string }).role).toBe("compactionSummary");
    // Everything from Pi's cut on, including the entries added after the snapshot, verbatim.
    const keptMessages = branch.slice(keptFrom).flatMap((e) => (e.type === "message" ? [e.message] : []));
    expect(after.slice(1)).toEqual(keptMessages);
    expect(before.slice(before.length - keptMessages.length)).toEqual(keptMessages);

    await host.fire("agent_end", { messages: [] });
    expect(host.state()).toEqual({ kind: "idle", lastJobId: "job-1" });
    expect(host.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "turn_end_draft", outcome: "applied" });
  });

  test("ready while idle: ctx.compact() then session_before_compact hands the result over", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.idle = true;
    atThreshold(host);
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(1);
    await flush();
    expect(host.state()).toEqual({ kind: "idle", lastJobId: "job-1" });
    const compaction = host.sm.getBranch().filter((e) => e.type === "compaction");
    expect(compaction).toHaveLength(1);
    expect(compaction[0].type === "compaction" && compaction[0].summary).toBe("summary of run 0");
    expect(host.status.get("async-compaction:test")).toBeUndefined();
  });

  test("never applied while busy", async () => {
    const { host, finish } = setup();
    await startJob(host); // busy (idle = false)
    finish(0);
    await flush();
    await host.fire("agent_end", { messages: [] });
    host.timers.advance(5_000);
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state().kind).toBe("ready");
    expect(host.status.get("async-compaction:test")).toBe("test compaction: ready");
  });

  test("never applied while messages are queued, even when idle", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.idle = true;
    host.pendingMessages = true;
    finish(0); // ready while idle but queued: no immediate apply
    await flush();
    await host.fire("agent_end", { messages: [] }); // settle retry sees the queue and stops
    host.timers.advance(5_000);
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state().kind).toBe("ready");
    expect(host.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "idle_compact", outcome: "deferred" });
  });

  test("idle arriving late after agent_end is caught by the bounded settle retry", async () => {
    const { host, finish } = setup();
    await startJob(host);
    finish(0);
    await flush();
    atThreshold(host);
    await host.fire("agent_end", { messages: [] });
    host.timers.advance(0); // first check on the next macrotask: still busy
    host.timers.advance(25 * 5);
    expect(host.compactCalls).toHaveLength(0);
    host.idle = true;
    host.timers.advance(25);
    expect(host.compactCalls).toHaveLength(1);
    await flush();
    expect(host.state().kind).toBe("idle");
  });

  test("the settle retry gives up after 40 attempts", async () => {
    const { host, finish } = setup();
    await startJob(host);
    finish(0);
    await flush();
    await host.fire("agent_end", { messages: [] });
    host.timers.advance(25 * 40);
    expect(host.timers.pending).toBe(0);
    host.idle = true;
    host.timers.advance(1_000);
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state().kind).toBe("ready");
  });
});

describe("races and invalidation", () => {
  test("an aborted or failed turn gets no draft; the job stays ready for the next completed one", async () => {
    const { host, finish } = setup();
    await startJob(host);
    finish(0);
    await flush();
    expect(await host.turnEnd("aborted")).toBeUndefined();
    expect(await host.turnEnd("error")).toBeUndefined();
    expect(host.state()).toMatchObject({ kind: "ready" });
    expect(host.sm.getBranch().some((e) => e.type === "compaction")).toBe(false);
    atThreshold(host);
    const r = await host.turnEnd();
    expect(r.entries[0].type).toBe("compaction");
  });

  test("timeout stales the job while the model call never settles", async () => {
    const { host, runs } = setup({ timeoutMs: 1_000 });
    await startJob(host);
    host.timers.advance(999);
    expect(host.state().kind).toBe("pending");
    host.timers.advance(1);
    expect(host.state()).toMatchObject({ kind: "stale", reason: "timeout" });
    expect(runs[0].signal.aborted).toBe(true);
  });

  test("a job invalidated while pending ignores its late result", async () => {
    const { host, finish } = setup();
    await startJob(host);
    await host.fire("model_select", { model: { provider: "faux", id: "m2" } });
    expect(host.state()).toMatchObject({ kind: "stale", reason: "model_changed" });
    finish(0);
    await flush();
    expect(host.state()).toMatchObject({ kind: "stale", reason: "model_changed" });
    expect(host.events).toContainEqual({ kind: "ignored", jobId: "job-1", cause: "settled_ok" });
  });

  test("/compact <instructions> while pending: sync_fallback at once, Pi's own summary", async () => {
    const { host } = setup();
    await startJob(host);
    expect(await host.runPiCompaction("keep the tests", "manual")).toBe("default");
    expect(host.state()).toMatchObject({ kind: "stale", reason: "sync_fallback" });
  });

  test("a ready job that no longer fits is staled too_large and superseded by a new job", async () => {
    const { host, builder, finish, runs } = setup({ contextWindow: 100_000 });
    await startJob(host);
    finish(0);
    await flush();
    // A message so large that even caught up to Pi's cut (which keeps it whole) the context after
    // the apply exceeds window - reserve (90k tokens = 360k chars).
    builder.apply({ op: "user", chars: 380_000 });
    atThreshold(host);
    await host.turnEnd();
    expect(host.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "turn_end_draft", outcome: "rejected", reason: "too_large" });
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "transition", jobId: "job-2", from: "stale", to: "pending", cause: "superseded", reason: "superseded" }));
    expect(runs).toHaveLength(2);
    expect(host.sm.getBranch().some((e) => e.type === "compaction")).toBe(false);
  });

  test("the size check measures the job as it will be applied: a tail too large for the job's own cut, caught up, fits", async () => {
    const { host, builder, finish } = setup({ contextWindow: 100_000 });
    await startJob(host);
    finish(0);
    await flush();
    // 100k tokens appended after the snapshot: over window - reserve from the job's cut, not from Pi's.
    for (let i = 0; i < 4; i++) builder.apply({ op: "user", chars: 100_000 });
    const lastMessage = host.sm.getLeafId(); // Pi's cut keeps it whole (25k tokens > keep)
    atThreshold(host);
    const r = await host.turnEnd();
    expect(host.events.some((e) => e.kind === "apply" && e.outcome === "rejected")).toBe(false);
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "catch_up", jobId: "job-1" }));
    expect(r.entries.at(-1)).toMatchObject({ type: "compaction", firstKeptEntryId: lastMessage });
  });

  test("another extension's compaction is never claimed", async () => {
    const { host, finish } = setup();
    await startJob(host);
    finish(0);
    await flush();
    const id = host.sm.appendCompaction("other ext", host.sm.getBranch()[3].id, 1, { contextKeeperAsyncCompaction: { jobId: "someone-else" } }, true);
    await host.fire("session_compact", { compactionEntry: host.sm.getEntry(id), fromExtension: true, reason: "manual", willRetry: false });
    expect(host.events.some((e) => e.kind === "apply" && e.outcome === "applied")).toBe(false);
    expect(host.state()).toMatchObject({ kind: "stale", reason: "sync_fallback" });
  });

  test("/compact <instructions> falls back to Pi", async () => {
    const { host, finish } = setup();
    await startJob(host);
    finish(0);
    await flush();
    expect(await host.runPiCompaction("focus on tests")).toBe("default");
    expect(host.state()).toMatchObject({ kind: "stale", reason: "custom_instructions" });
  });

  test("an error after handoff is recorded", async () => {
    const { host, finish } = setup();
    await startJob(host);
    finish(0);
    await flush();
    const branchEntries = host.sm.getBranch();
    const r = await host.fire("session_before_compact", {
      preparation: { tokensBefore: 1, settings: host.settings },
      branchEntries,
      reason: "threshold",
      willRetry: false,
    });
    expect(r.compaction.summary).toBe("summary of run 0");
    await host.fire("session_compact_failed", { reason: "threshold", errorMessage: "disk full", aborted: false, willRetry: false, fromExtension: true });
    expect(host.state()).toMatchObject({ kind: "failed", error: "disk full" });
    expect(host.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "session_before_compact", outcome: "failed", error: "disk full" });
  });

  test("thinking change and tree navigation stale the job", async () => {
    const a = setup();
    await startJob(a.host);
    await a.host.fire("thinking_level_select", { level: "off", previousLevel: "off" });
    expect(a.host.state().kind).toBe("pending"); // same level: no drift
    await a.host.fire("thinking_level_select", { level: "high", previousLevel: "off" });
    expect(a.host.state()).toMatchObject({ kind: "stale", reason: "thinking_changed" });

    const b = setup();
    await startJob(b.host);
    b.host.sm.branch(b.host.sm.getBranch()[1].id); // navigate back before the cut
    await b.host.fire("session_tree", {});
    expect(b.host.state()).toMatchObject({ kind: "stale", reason: "first_kept_missing" });
  });

  test("session shutdown cancels and aborts", async () => {
    const { host, runs } = setup();
    await startJob(host);
    await host.fire("session_shutdown", { reason: "quit" });
    expect(host.state()).toMatchObject({ kind: "stale", reason: "cancelled" });
    expect(runs[0].signal.aborted).toBe(true);
  });
});

describe("abort and compact", () => {
  test("over the hard threshold mid-stream: compact once, then one continue", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.streaming = true;
    host.tokens = 97_000; // > 100k - 10k, and less than the 4,096-token room margin left
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(1);
    await flush();
    expect(host.state().kind).toBe("idle");
    host.timers.advance(0);
    expect(host.sentUserMessages).toEqual(["continue"]);
  });

  test("over the hard threshold with room for another turn it waits for the turn end (nothing aborted)", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.streaming = true;
    host.tokens = 95_000; // > 100k - 10k, but 95k + 4,096 still fits the window
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state().kind).toBe("ready");
    host.streaming = false;
    const r = await host.turnEnd();
    expect(r.entries.map((e: { type: string }) => e.type)).toEqual(["compaction"]);
  });

  test("below the hard threshold mid-stream it waits", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.streaming = true;
    host.tokens = 85_000;
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state().kind).toBe("ready");
  });
});

describe("/async-compact-now", () => {
  test("starts below the threshold, is a no-op while pending, applies when ready and idle", async () => {
    const { host, finish, runs } = setup();
    host.tokens = 1_000;
    const cmd = host.commands.get("async-compact-now")!;
    host.idle = false;
    await cmd("", host.ctx());
    expect(host.state()).toMatchObject({ kind: "pending", job: { manual: true } });
    await cmd("", host.ctx());
    expect(runs).toHaveLength(1);
    expect(host.notes).toContain("test compaction: already preparing");
    finish(0);
    await flush();
    host.idle = true;
    await cmd("", host.ctx());
    expect(host.compactCalls).toHaveLength(1);
  });

  test("asked for while idle far below the threshold: applied as soon as it is ready (the request is the need)", async () => {
    const { host, finish } = setup();
    host.tokens = 1_000;
    host.idle = true;
    await host.commands.get("async-compact-now")!("", host.ctx());
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(1);
  });

  test("asked for during a run: the turn end after it is ready drafts it, whatever the context size", async () => {
    const { host, finish } = setup();
    host.tokens = 1_000;
    host.idle = false;
    await host.commands.get("async-compact-now")!("", host.ctx());
    finish(0);
    await flush();
    const r = await host.turnEnd();
    expect(r.entries.map((e: { type: string }) => e.type)).toEqual(["compaction"]);
  });
});

