/**
 * The late job through Pi's hooks (FakeHost: window 100k, reserve 10k, wait bound 5 s, manual
 * timers): past the stall budget Pi gets a digest of its own cut at once, the job runs on, and
 * its summary becomes the digest's upgrade, which the next job starts from.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { flush } from "../../test/support/compaction/fake-pi.ts";
import { setup, startJob, TURN } from "../../test/support/compaction/wiring-setup.ts";
import { DIGEST_HEADING } from "./catch-up.ts";
import { LATE_DIGEST_HEADING } from "./late-digest.ts";
import { UPGRADE_ENTRY_TYPE, upgradeOf } from "./late-digest-entry.ts";
import { prepareCompaction } from "./prepare.ts";
import { piCompactionPrimitives } from "../host/compaction-runtime.ts";

type Host = ReturnType<typeof setup>["host"];
const compactions = (host: Host) => host.sm.getBranch().filter((e) => e.type === "compaction");

/** Pi's threshold compaction with no room left and the job still running, past a stall budget of `stallMs`: the digest lands. */
async function digestAtThreshold(host: Host, stallMs: number): Promise<void> {
  host.tokens = 97_000;
  const compaction = host.runPiCompaction(undefined, "threshold");
  await flush();
  host.timers.advance(stallMs);
  expect(await compaction).toBe("extension");
}

describe("a job late past the stall budget", () => {
  test("Pi gets a digest of its own cut at once; the job runs on and its summary upgrades the digest", async () => {
    const { host, runs, finish, builder } = setup({ stallMs: 1_000 });
    await startJob(host);
    builder.applyAll(TURN); // the context moves on while the job runs: its cut falls behind Pi's
    builder.applyAll(TURN);
    host.tokens = 97_000; // no room
    const piPreparation = prepareCompaction(host.sm.getBranch(), host.settings, piCompactionPrimitives)!;
    const compaction = host.runPiCompaction(undefined, "threshold");
    await flush();
    host.timers.advance(999);
    await flush();
    expect(host.state()).toMatchObject({ kind: "pending" });
    expect(compactions(host)).toHaveLength(0);
    host.timers.advance(1);
    expect(await compaction).toBe("extension");

    const [digest] = compactions(host);
    if (digest.type !== "compaction") throw new Error("not a compaction");
    expect(digest.firstKeptEntryId).toBe(piPreparation.firstKeptEntryId);
    expect(digest.summary.startsWith(LATE_DIGEST_HEADING)).toBe(true);
    expect(digest.summary).toContain("- called read(path: src/a.ts, content: x)\n  → read ok, 1 lines");
    expect(digest.summary).toContain("<read-files>\nsrc/a.ts\n</read-files>");
    // The machine is free for the next job; the run goes on for the upgrade.
    expect(host.state()).toEqual({ kind: "idle", lastJobId: "job-1" });
    expect(host.controller.isLate("job-1")).toBe(true);
    expect(runs[0].signal.aborted).toBe(false);
    expect(host.notes.some((n) => n.includes("extractive digest"))).toBe(false); // on the next tick, after Pi renders the compacted session
    host.timers.advance(0);
    expect(host.notes.at(-1)).toContain("applied an extractive digest");
    expect(host.events).toContainEqual(expect.objectContaining({ kind: "at_compact", decision: "wait", waitEnd: "timeout", waitedMs: 1_000 }));

    finish(0);
    await flush();
    expect(host.controller.isLate("job-1")).toBe(false);
    const upgrades = host.sm.getBranch().flatMap((e) => (e.type === "custom" && e.customType === UPGRADE_ENTRY_TYPE ? [upgradeOf(e)!] : []));
    expect(upgrades).toHaveLength(1);
    expect(upgrades[0].compactionEntryId).toBe(digest.id);
    // The job's summary, caught up from its cut to the digest's.
    expect(upgrades[0].summary.startsWith("summary of run 0")).toBe(true);
    expect(upgrades[0].summary).toContain(DIGEST_HEADING);
    expect(host.events).toContainEqual({ kind: "apply", jobId: "job-1", path: "late_digest", outcome: "upgraded" });

    // The next job starts from the upgrade, not from the digest; so does a digest in its place.
    for (let i = 0; i < 6; i++) builder.applyAll(TURN);
    await startJob(host);
    expect(runs[1].prepared.previousSummary).toBe(upgrades[0].summary);
    builder.applyAll(TURN);
    await digestAtThreshold(host, 1_000);
    const last = compactions(host).at(-1)!;
    expect(last.type === "compaction" && last.summary.startsWith(`${upgrades[0].summary}\n\n---\n\n${LATE_DIGEST_HEADING}`)).toBe(true);
  });

  test("an upgrade written while Pi waits for the next job: the next digest starts from it", async () => {
    const { host, finish, builder } = setup({ stallMs: 1_000 });
    await startJob(host);
    await digestAtThreshold(host, 1_000);
    for (let i = 0; i < 6; i++) builder.applyAll(TURN);
    await startJob(host); // job 2 starts from the first digest: no upgrade yet
    builder.applyAll(TURN);
    host.tokens = 97_000;
    const compaction = host.runPiCompaction(undefined, "threshold"); // Pi's event holds the branch as it is now
    await flush();
    finish(0); // job 1's summary comes during the wait: its upgrade is written
    await flush();
    const upgrade = host.sm.getBranch().flatMap((e) => (e.type === "custom" && e.customType === UPGRADE_ENTRY_TYPE ? [upgradeOf(e)!] : []))[0];
    expect(upgrade).toBeDefined();
    host.timers.advance(1_000);
    expect(await compaction).toBe("extension");
    const last = compactions(host).at(-1)!;
    expect(last.type === "compaction" && last.summary.startsWith(`${upgrade!.summary}\n\n---\n\n${LATE_DIGEST_HEADING}`)).toBe(true);
  });

  test("the job fails after the digest: nothing is written, the digest stays", async () => {
    const { host, runs } = setup({ stallMs: 0 });
    await startJob(host);
    await digestAtThreshold(host, 0);
    runs[0].done.reject(new Error("provider down"));
    await flush();
    expect(host.controller.isLate("job-1")).toBe(false);
    expect(host.events).toContainEqual({ kind: "diagnostic", message: "late job job-1 failed: provider down; its digest stays" });
    expect(host.sm.getBranch().some((e) => e.type === "custom" && e.customType === UPGRADE_ENTRY_TYPE)).toBe(false);
    expect(compactions(host)).toHaveLength(1);
  });

  test("after a /tree move away from the digest, the summary is not written (no orphan entry)", async () => {
    const { host, finish } = setup({ stallMs: 0 });
    await startJob(host);
    const before = host.sm.getLeafId()!;
    await digestAtThreshold(host, 0);
    host.sm.branch(before); // back to the leaf before the digest
    finish(0);
    await flush();
    expect(host.sm.getEntries().some((e) => e.type === "custom" && e.customType === UPGRADE_ENTRY_TYPE)).toBe(false);
    expect(host.events).toContainEqual({ kind: "diagnostic", message: "late job job-1: its digest is not on the current branch; the summary is dropped" });
  });

  test("the user's own /compact waits for the model's summary, whatever the stall budget", async () => {
    const { host, finish } = setup({ stallMs: 0 });
    await startJob(host);
    host.tokens = 97_000;
    const compaction = host.runPiCompaction(undefined, "manual");
    await flush();
    host.timers.advance(2_000);
    await flush();
    expect(host.state().kind).toBe("pending");
    finish(0);
    expect(await compaction).toBe("extension");
    const [applied] = compactions(host);
    expect(applied.type === "compaction" && applied.summary.startsWith("summary of run 0")).toBe(true);
  });

  test("a new job may start while the late one runs; the late one's timeout aborts only its own run", async () => {
    const { host, runs, builder } = setup({ stallMs: 0, timeoutMs: 10_000 });
    await startJob(host);
    await digestAtThreshold(host, 0);
    host.timers.advance(5_000);
    for (let i = 0; i < 6; i++) builder.applyAll(TURN);
    await startJob(host);
    expect(host.state()).toMatchObject({ kind: "pending", job: { jobId: "job-2" } });
    host.timers.advance(5_000); // the late run's 10 s are up; job 2's are not
    expect(runs[0].signal.aborted).toBe(true);
    expect(host.controller.isLate("job-1")).toBe(false);
    expect(host.state()).toMatchObject({ kind: "pending", job: { jobId: "job-2" } });
    expect(runs[1].signal.aborted).toBe(false);
  });

  test("with room at the threshold Pi's compaction is still cancelled (no digest)", async () => {
    const { host } = setup({ stallMs: 0 });
    await startJob(host);
    host.tokens = 91_000;
    expect(await host.runPiCompaction(undefined, "threshold")).toBe("cancelled");
    expect(host.state()).toMatchObject({ kind: "pending" });
    expect(compactions(host)).toHaveLength(0);
  });
});

describe("late jobs under random interleavings (property)", () => {
  type Cmd =
    | { kind: "grow" }
    | { kind: "turn_end" }
    | { kind: "threshold"; room: boolean }
    | { kind: "settle"; ok: boolean; pick: number }
    | { kind: "advance"; ms: number };
  const cmd = fc.oneof(
    { weight: 2, arbitrary: fc.constant<Cmd>({ kind: "grow" }) },
    { weight: 3, arbitrary: fc.constant<Cmd>({ kind: "turn_end" }) },
    { weight: 3, arbitrary: fc.boolean().map<Cmd>((room) => ({ kind: "threshold", room })) },
    { weight: 3, arbitrary: fc.tuple(fc.boolean(), fc.nat()).map<Cmd>(([ok, pick]) => ({ kind: "settle", ok, pick })) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 12_000 }).map<Cmd>((ms) => ({ kind: "advance", ms })) },
  );

  test("Pi's threshold compaction with a job in flight and no room is always the extension's; upgrades only for digests on the branch, one each; nothing runs on after shutdown", async () => {
    const seen = { digests: 0, upgrades: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 2_000 }), async (cmds, stallMs) => {
        const { host, runs, builder } = setup({ stallMs, timeoutMs: 10_000 });
        const settled = new Set<number>();
        for (const c of cmds) {
          if (c.kind === "grow") builder.applyAll(TURN);
          else if (c.kind === "turn_end") {
            host.idle = false;
            host.tokens = 60_000;
            await host.turnEnd();
          } else if (c.kind === "advance") {
            host.timers.advance(c.ms);
            await flush();
          } else if (c.kind === "settle") {
            const open = runs.map((_, k) => k).filter((k) => !settled.has(k));
            if (open.length === 0) continue;
            const i = open[c.pick % open.length];
            settled.add(i);
            if (c.ok) runs[i].done.resolve({ summary: `model summary ${i}`, firstKeptEntryId: runs[i].prepared.firstKeptEntryId, tokensBefore: 1, details: { readFiles: [], modifiedFiles: [] } });
            else runs[i].done.reject(new Error("down"));
            await flush();
          } else {
            const before = host.state();
            const pendingJob = before.kind === "pending" ? before.job.jobId : undefined;
            host.tokens = c.room ? 91_000 : 97_000;
            let outcome: string;
            try {
              const p = host.runPiCompaction(undefined, "threshold");
              await flush();
              host.timers.advance(stallMs);
              await flush();
              outcome = await p;
            } catch (e) {
              expect((e as Error).message).toBe("Nothing to compact");
              continue;
            }
            if (pendingJob && c.room) expect(outcome).toBe("cancelled");
            if (pendingJob && !c.room && outcome !== "extension") {
              // Only a job that ended without a summary during the wait (its own timeout) leaves Pi to compact.
              expect(outcome).toBe("default");
              expect(host.events).toContainEqual(expect.objectContaining({ kind: "transition", jobId: pendingJob, to: "stale", reason: "timeout" }));
            }
          }
          const branch = host.sm.getBranch();
          const ids = new Set(branch.filter((e) => e.type === "compaction").map((e) => e.id));
          const upgraded = branch.flatMap((e) => (e.type === "custom" && e.customType === UPGRADE_ENTRY_TYPE ? [upgradeOf(e)!.compactionEntryId] : []));
          for (const id of upgraded) expect(ids.has(id)).toBe(true);
          expect(new Set(upgraded).size).toBe(upgraded.length);
        }
        seen.digests += host.events.filter((e) => e.kind === "apply" && e.path === "late_digest" && e.outcome === "applied").length;
        seen.upgrades += host.events.filter((e) => e.kind === "apply" && e.path === "late_digest" && e.outcome === "upgraded").length;
        await host.fire("session_shutdown", {});
        for (let i = 0; i < runs.length; i++) expect(host.controller.isLate(`job-${i + 1}`)).toBe(false);
      }),
      { numRuns: 200, seed: 12 },
    );
    // The generated sessions reach the paths the property is about.
    console.log(`[late-handoff property] ${seen.digests} digests, ${seen.upgrades} upgrades over 200 sessions`);
    expect(seen.digests).toBeGreaterThan(20);
    expect(seen.upgrades).toBeGreaterThan(5);
  });
});
