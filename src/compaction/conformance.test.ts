/**
 * Drop-in conformance with pi-async-compaction on the wiring: re-validation before every
 * ctx.compact(), Pi's `compaction.enabled: false`, the command's answers.
 */
import { describe, expect, test } from "bun:test";
import { flush } from "../../test/support/compaction/fake-pi.ts";
import { atThreshold, setup, startJob } from "../../test/support/compaction/wiring-setup.ts";

async function readyWhileBusy() {
  const s = setup();
  await startJob(s.host);
  s.finish(0);
  await flush();
  expect(s.host.state().kind).toBe("ready");
  return s;
}

describe("re-validation before ctx.compact()", () => {
  test("idle path (agent_end settle): a stale job is rejected, Pi is not asked", async () => {
    const { host } = await readyWhileBusy();
    host.settings = { ...host.settings, keepRecentTokens: host.settings.keepRecentTokens + 1 };
    host.idle = true;
    atThreshold(host);
    await host.fire("agent_end", { messages: [] });
    host.timers.advance(0);
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state()).toMatchObject({ kind: "stale", reason: "settings_changed" });
    expect(host.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "idle_compact", outcome: "rejected", reason: "settings_changed" });
  });

  test("the command: a stale ready job is rejected and the user told; a valid one is applied", async () => {
    const a = await readyWhileBusy();
    a.host.idle = true;
    a.host.settings = { ...a.host.settings, reserveTokens: 11_000 };
    await a.host.commands.get("async-compact-now")!("", a.host.ctx());
    expect(a.host.compactCalls).toHaveLength(0);
    expect(a.host.notes).toEqual(["test compaction: the ready summary went stale; not applied"]);

    const b = await readyWhileBusy();
    b.host.idle = true;
    await b.host.commands.get("async-compact-now")!("", b.host.ctx());
    expect(b.host.compactCalls).toHaveLength(1);
    await flush();
    expect(b.host.state().kind).toBe("idle");
    expect(b.host.notes).toEqual([]); // said on the next tick, after Pi renders the compacted session
    b.host.timers.advance(0);
    expect(b.host.notes).toEqual([expect.stringMatching(/^test compaction: applied a background summary/)]);
  });

  test("ready while idle: a job gone stale meanwhile is not handed to ctx.compact()", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.idle = true;
    atThreshold(host);
    host.thinkingLevel = "high"; // changed without an event: only the apply checks can see it
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state()).toMatchObject({ kind: "stale", reason: "thinking_changed" });
  });
});

describe("Pi's compaction.enabled: false", () => {
  test("no job starts on its own; the command still starts one", async () => {
    const { host, runs } = setup();
    host.settings = { ...host.settings, enabled: false };
    host.idle = false;
    host.tokens = 60_000;
    await host.turnEnd();
    expect(runs).toHaveLength(0);
    expect(host.events).toContainEqual({ kind: "skipped", reason: "pi_compaction_disabled" });
    await host.commands.get("async-compact-now")!("", host.ctx());
    expect(runs).toHaveLength(1);
    expect(host.notes).toEqual(["test compaction: preparing"]);
  });
});

describe("messages without a UI", () => {
  test("the command answers on the console when ctx.hasUI is false", async () => {
    const { host } = setup();
    const logged: string[] = [];
    const original = console.log;
    console.log = (...a: unknown[]) => void logged.push(a.join(" "));
    try {
      host.tokens = 1_000;
      host.idle = false;
      await host.commands.get("async-compact-now")!("", { ...host.ctx(), hasUI: false } as never);
    } finally {
      console.log = original;
    }
    expect(logged).toEqual(["test compaction: preparing"]);
    expect(host.notes).toEqual([]);
  });
});
