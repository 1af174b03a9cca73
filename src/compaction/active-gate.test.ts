/** `isActive`: when it answers false every hook and the command stand aside. */
import { describe, expect, test } from "bun:test";
import { FakeHost, flush, scriptedAdapter } from "../../test/support/compaction/fake-pi.ts";
import { type BuildOp, SessionBuilder } from "../../test/support/compaction/session-builder.ts";

const TURN: BuildOp[] = [
  { op: "user", chars: 400 },
  { op: "tool_loop", tool: "read", path: "src/a.ts", resultChars: 4000 },
  { op: "reply", chars: 600 },
];

function setup() {
  const builder = new SessionBuilder();
  for (let i = 0; i < 6; i++) builder.applyAll(TURN);
  const scripted = scriptedAdapter();
  const gate = { on: false };
  const host = new FakeHost({ sm: builder.sm, adapter: scripted.adapter, isActive: () => gate.on });
  return { host, builder, gate, ...scripted };
}

describe("isActive", () => {
  test("inactive: no job starts, turn_end and session_before_compact return nothing, no status line", async () => {
    const { host, runs } = setup();
    host.idle = false;
    host.tokens = 60_000; // inside the window (lower 50k, upper 90k): would start when active
    expect(await host.turnEnd()).toBeUndefined();
    expect(runs).toHaveLength(0);
    expect(host.state().kind).toBe("idle");
    expect(await host.runPiCompaction(undefined, "threshold")).toBe("default");
    await host.fire("agent_end", { messages: [] });
    expect(host.status.size).toBe(0); // setStatus never called
    expect(host.events).toHaveLength(0);
  });

  test("turned off: the start window the pruning side reads is cleared (its budget flush is not held)", async () => {
    const { host, gate } = setup();
    gate.on = true;
    host.idle = false;
    host.tokens = 40_000; // below the window: no job, but the window is known
    await host.turnEnd();
    expect(host.controller.outlook().startWindow).toEqual({ lower: 50_000, upper: 90_000 });
    gate.on = false;
    await host.turnEnd();
    expect(host.controller.outlook()).toEqual({ job: "none", handoffs: 0 });
  });

  test("inactive: the command says it is disabled and starts nothing", async () => {
    const { host, runs } = setup();
    await host.commands.get("async-compact-now")!("", host.ctx());
    expect(host.notes).toEqual(["test compaction: disabled"]);
    expect(runs).toHaveLength(0);
  });

  test("inactive: a stored ready summary is not restored", async () => {
    const { host, gate, finish } = setup();
    gate.on = true;
    host.idle = false;
    host.tokens = 60_000;
    await host.turnEnd();
    host.pendingMessages = true;
    finish(0);
    await flush();
    await host.fire("agent_end", { messages: [] }); // persisted, not applied (queued)
    const again = new FakeHost({ sm: host.sm, adapter: scriptedAdapter().adapter, isActive: () => false });
    await again.fire("session_start", { reason: "resume" });
    expect(again.state().kind).toBe("idle");
  });

  test("turning inactive cancels a running job, aborts its call and clears the status", async () => {
    const { host, gate, runs, finish } = setup();
    gate.on = true;
    host.idle = false;
    host.tokens = 60_000;
    await host.turnEnd();
    expect(host.status.get("async-compaction:test")).toBe("test compaction: preparing");
    gate.on = false;
    expect(await host.turnEnd()).toBeUndefined();
    expect(host.state()).toMatchObject({ kind: "stale", reason: "cancelled" });
    expect(runs[0].signal.aborted).toBe(true);
    expect(host.status.get("async-compaction:test")).toBeUndefined();
    finish(0); // the late result is ignored
    await flush();
    expect(host.state()).toMatchObject({ kind: "stale", reason: "cancelled" });
  });

  test("a job that becomes ready while inactive is never applied", async () => {
    const { host, gate, finish } = setup();
    gate.on = true;
    host.idle = false;
    host.tokens = 60_000;
    await host.turnEnd();
    gate.on = false;
    host.idle = true;
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state()).toMatchObject({ kind: "stale", reason: "cancelled" });
  });

  test("active again: work resumes", async () => {
    const { host, gate, runs } = setup();
    host.idle = false;
    host.tokens = 60_000;
    await host.turnEnd();
    expect(runs).toHaveLength(0);
    gate.on = true;
    await host.turnEnd();
    expect(runs).toHaveLength(1);
  });
});
