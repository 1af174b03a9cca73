/**
 * A ready summary waits for need (`apply-need.ts`) on the wiring: at turn ends, while idle,
 * after a restart; Pi's own threshold compaction is served by it; a waiting summary whose cut
 * fell far behind is refreshed.
 */
import { describe, expect, test } from "bun:test";
import { type FakeHost, flush } from "../../test/support/compaction/fake-pi.ts";
import { atThreshold, readyAcrossRestart, setup, startJob, TURN } from "../../test/support/compaction/wiring-setup.ts";
import { COLD_SLACK_MS } from "./apply-need.ts";

/** A model whose cache entries live `seconds` (Anthropic's rule, the model's own lifetime). */
const withCacheLifetime = (host: FakeHost, seconds: number) => {
  host.model = { ...host.model, api: "anthropic-messages", promptCache: { short: seconds } };
};

const waiting = (host: FakeHost) => host.events.filter((e) => e.kind === "apply" && e.outcome === "waiting");

describe("a ready summary waits for need", () => {
  test("at turn ends below the apply point no draft; at the first turn end within the largest turn of Pi's threshold, the draft", async () => {
    const { host, finish } = setup();
    await startJob(host); // 60k of a 100k window, Pi's threshold 90k
    finish(0);
    await flush();
    for (let tokens = 62_000; tokens < 88_000; tokens += 2_000) {
      host.tokens = tokens;
      expect(await host.turnEnd()).toBeUndefined();
    }
    expect(host.state()).toMatchObject({ kind: "ready" });
    expect(waiting(host)).toEqual([{ kind: "apply", jobId: "job-1", path: "turn_end_draft", outcome: "waiting" }]); // said once
    host.tokens = 88_000; // 90k − 2,000
    const r = await host.turnEnd();
    expect(r.entries.map((e: { type: string }) => e.type)).toEqual(["compaction"]);
  });

  test("a turn end after a gap longer than the cache's lifetime (a long tool run) applies the waiting summary: the next request writes everything anyway", async () => {
    const { host, finish } = setup();
    withCacheLifetime(host, 60);
    await startJob(host);
    finish(0);
    await flush();
    host.tokens = 62_000;
    expect(await host.turnEnd()).toBeUndefined();
    host.timers.advance(60_000);
    host.tokens = 63_000;
    const r = await host.turnEnd();
    expect(r.entries.map((e: { type: string }) => e.type)).toEqual(["compaction"]);
  });

  test("Pi's own threshold compaction (a turn larger than the margin) is served by the waiting summary", async () => {
    const { host, finish } = setup();
    await startJob(host);
    finish(0);
    await flush();
    await host.turnEnd();
    expect(host.state()).toMatchObject({ kind: "ready" });
    expect(await host.runPiCompaction(undefined, "threshold")).toBe("extension");
    expect(host.state()).toMatchObject({ kind: "idle", lastJobId: "job-1" });
  });

  test("ready while idle below the apply point: kept; applied through ctx.compact() once the idle cache is cold", async () => {
    const { host, finish } = setup();
    withCacheLifetime(host, 60);
    await startJob(host); // the turn end at t=0: the cache was last used then
    host.idle = true;
    finish(0);
    await flush();
    expect(host.compactCalls).toHaveLength(0);
    expect(waiting(host)).toEqual([{ kind: "apply", jobId: "job-1", path: "idle_compact", outcome: "waiting" }]);
    host.timers.advance(60_000 + COLD_SLACK_MS - 1);
    expect(host.compactCalls).toHaveLength(0);
    host.timers.advance(1);
    expect(host.compactCalls).toHaveLength(1);
    await flush();
    expect(host.state()).toMatchObject({ kind: "idle", lastJobId: "job-1" });
    expect(host.sm.getBranch().filter((e) => e.type === "compaction")).toHaveLength(1);
  });

  test("after agent_end the summary waits; a prompt that starts before the cache is cold keeps it waiting (nothing aborted)", async () => {
    const { host, finish } = setup();
    withCacheLifetime(host, 60);
    await startJob(host);
    finish(0);
    await flush();
    host.timers.advance(10_000);
    await host.fire("agent_end", { messages: [] });
    expect(host.compactCalls).toHaveLength(0);
    host.idle = false; // the next prompt runs when the timer fires
    host.timers.advance(61_000 + COLD_SLACK_MS);
    expect(host.compactCalls).toHaveLength(0);
    expect(host.state()).toMatchObject({ kind: "ready" });
  });

  test("a model with no known cache lifetime: the summary waits for the threshold only", async () => {
    const { host, finish } = setup();
    await startJob(host);
    host.idle = true;
    finish(0);
    await flush();
    expect(host.timers.pending).toBe(0); // no cold timer: the lifetime is unknown
    host.timers.advance(24 * 3600_000);
    expect(host.compactCalls).toHaveLength(0);
  });

  test("restored after a restart with the cache still warm: waits; applied once it is cold", async () => {
    const { again } = await readyAcrossRestart();
    withCacheLifetime(again, 60);
    const lastAnswer = Math.max(...again.sm.getBranch().flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message.timestamp] : [])));
    again.timers.now = lastAnswer + 20_000; // resumed 20 s after the last request
    await again.fire("session_start", { reason: "resume" });
    again.timers.advance(0);
    expect(again.compactCalls).toHaveLength(0);
    expect(again.state()).toMatchObject({ kind: "ready" });
    again.timers.advance(40_000 + COLD_SLACK_MS);
    expect(again.compactCalls).toHaveLength(1);
  });
});

describe("refresh", () => {
  test("a waiting summary whose cut fell further behind than keepRecentTokens and than it covers is replaced by a new job one summary's lead before the apply point", async () => {
    const { host, builder, finish, runs } = setup();
    await startJob(host); // 60k at t = 0
    host.timers.advance(1_000);
    finish(0); // a summary takes 1 s
    await flush();
    for (let i = 0; i < 8; i++) builder.applyAll(TURN); // ~10,000 tokens past the summary's cut: more than it covers (~5,000) and than keep (2,000)
    // 2,000 tokens a second: the lead is 2,000/s × 1 s × 1.25 = 2,500; the apply point 90k − 2,000 = 88k.
    for (let tokens = 62_000; tokens <= 84_000; tokens += 2_000) {
      host.timers.advance(1_000);
      host.tokens = tokens;
      await host.turnEnd();
    }
    expect(runs).toHaveLength(1); // far from the apply point: the new summary would wait and fall behind in turn
    host.timers.advance(1_000);
    host.tokens = 86_000; // ≥ 88k − 2.5k, not yet 88k
    await host.turnEnd();
    expect(runs).toHaveLength(2);
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "refresh", jobId: "job-1" }));
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "transition", jobId: "job-2", from: "ready", to: "pending", cause: "superseded" }));
    // The new summary is due like any: applied near the threshold.
    finish(1);
    await flush();
    atThreshold(host);
    const r = await host.turnEnd();
    expect(r.entries[0]).toMatchObject({ type: "compaction", summary: expect.stringContaining("summary of run 1") });
  });

  test("a summary whose cut is close behind (less than it covers) is not refreshed: it is caught up at apply", async () => {
    const { host, builder, finish, runs } = setup();
    await startJob(host);
    host.timers.advance(1_000);
    finish(0);
    await flush();
    for (let i = 0; i < 3; i++) builder.applyAll(TURN); // ~3,000 tokens past the cut: more than keep, less than it covers
    for (let tokens = 62_000; tokens <= 86_000; tokens += 2_000) {
      host.timers.advance(1_000);
      host.tokens = tokens;
      await host.turnEnd();
    }
    expect(runs).toHaveLength(1);
    expect(host.events.some((e) => e.kind === "refresh")).toBe(false);
  });
});
