/** Persistence wiring: a ready summary is written, read back after a restart, revalidated. */
import { describe, expect, test } from "bun:test";
import { READY_ENTRY_TYPE } from "./persistence.ts";
import { FakeHost, flush, scriptedAdapter } from "../../test/support/compaction/fake-pi.ts";
import { atThreshold, readyAcrossRestart, setup, startJob } from "../../test/support/compaction/wiring-setup.ts";

describe("persistence", () => {
  test("a ready summary is persisted at agent_end and restored after a restart", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.pendingMessages = true;
    finish(0);
    await flush();
    await host.fire("agent_end", { messages: [] });
    const stored = host.sm.getBranch().filter((e) => e.type === "custom" && e.customType === READY_ENTRY_TYPE);
    expect(stored).toHaveLength(1);

    // A new process on the same session.
    const again = new FakeHost({ sm: host.sm, adapter: scriptedAdapter().adapter });
    await again.fire("session_start", { reason: "resume" });
    expect(again.state()).toMatchObject({ kind: "ready", persisted: true, result: { summary: "summary of run 0" } });
    again.idle = false;
    atThreshold(again);
    const r = await again.turnEnd();
    expect(r.entries[0].summary).toBe("summary of run 0");
  });

  test("restored while idle with the context at Pi's threshold: applied right away through Pi's compaction flow", async () => {
    const { again } = await readyAcrossRestart();
    atThreshold(again);
    await again.fire("session_start", { reason: "resume" });
    expect(again.compactCalls).toHaveLength(0); // on the next macrotask, not inside session_start
    again.timers.advance(0);
    expect(again.compactCalls).toHaveLength(1);
    await flush();
    expect(again.state()).toMatchObject({ kind: "idle", lastJobId: "job-1" });
    const compactions = again.sm.getBranch().filter((e) => e.type === "compaction");
    expect(compactions.map((e) => e.type === "compaction" && e.summary)).toEqual(["summary of run 0"]);
  });

  test("session shutdown persists a ready summary that was never written", async () => {
    const { host, finish } = setup();
    await startJob(host); // busy
    finish(0);
    await flush();
    expect(host.state()).toMatchObject({ kind: "ready", persisted: false });
    await host.fire("session_shutdown", { reason: "quit" });
    const stored = host.sm.getBranch().filter((e) => e.type === "custom" && e.customType === READY_ENTRY_TYPE);
    expect(stored).toHaveLength(1);
    expect(host.state()).toMatchObject({ kind: "stale", reason: "cancelled" });
    const again = new FakeHost({ sm: host.sm, adapter: scriptedAdapter().adapter });
    again.idle = false;
    await again.fire("session_start", { reason: "resume" });
    expect(again.state()).toMatchObject({ kind: "ready", result: { summary: "summary of run 0" } });
  });

  test("restore: skipped once applied; staled sync_fallback after someone else's compaction", async () => {
    const persistReady = async () => {
      const s = setup();
      await startJob(s.host);
      s.host.pendingMessages = true;
      s.finish(0);
      await flush();
      await s.host.fire("agent_end", { messages: [] });
      return s;
    };
    const a = await persistReady();
    a.host.pendingMessages = false;
    a.host.idle = false;
    atThreshold(a.host);
    await a.host.turnEnd(); // applied as a draft after the stored entry
    const resumedA = new FakeHost({ sm: a.host.sm, adapter: scriptedAdapter().adapter });
    await resumedA.fire("session_start", { reason: "resume" });
    expect(resumedA.state().kind).toBe("idle");
    expect(resumedA.events).toEqual([]);

    const b = await persistReady();
    b.host.sm.appendCompaction("pi's own", b.host.sm.getBranch()[3].id, 1, { readFiles: [], modifiedFiles: [] }, false);
    const resumedB = new FakeHost({ sm: b.host.sm, adapter: scriptedAdapter().adapter });
    await resumedB.fire("session_start", { reason: "resume" });
    expect(resumedB.state()).toMatchObject({ kind: "stale", reason: "sync_fallback" });
    expect(resumedB.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "restore", outcome: "rejected", reason: "sync_fallback" });
  });

  test("a restored summary that no longer validates is staled with its reason", async () => {
    const { again } = await readyAcrossRestart();
    again.model = { ...again.model, id: "other-model" };
    await again.fire("session_start", { reason: "resume" });
    expect(again.state()).toMatchObject({ kind: "stale", reason: "model_changed" });
    expect(again.statusCalls).toEqual([]); // never shown as ready
    expect(again.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "restore", outcome: "rejected", reason: "model_changed" });
  });
});
