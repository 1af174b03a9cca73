/**
 * The apply paths and switches of async compaction on the wire (real pi CLI, fake Anthropic
 * server, 2 s summaries): Pi's threshold compaction cancelled while there is room, the bounded
 * wait running out, abort-and-compact with Pi's `compaction.enabled: false`, and the command
 * when the subsystem is switched off.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { MainStep } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, type PiRunResult, type PiWorkspace, type RpcRecord, type RpcStep, runPi } from "../support/pi-runner.ts";
import { brokenReplies, compactionsOf, delayedSummaryRouter, entriesOf, errorRecords, markerJobId, readSteps, readTrace, sandboxFiles, type TraceEvent, WIRE_SETUP } from "../support/compaction/e2e-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));
const workspace = createPiWorkspace(sandboxFiles(50));
workspaces.push(workspace);

type Run = PiRunResult & { trace: TraceEvent[] };

async function run(name: string, o: { script?: MainStep[]; prompts: RpcStep[]; env?: Record<string, string>; settings?: Record<string, unknown>; model?: { contextWindow: number }; thinking?: "off" }): Promise<Run> {
  const traceFile = join(workspace.root, `paths-${name}.jsonl`);
  const result = await runPi({
    prompts: o.prompts,
    mode: "rpc",
    workspace,
    script: o.script ?? [],
    sideRouter: delayedSummaryRouter,
    serverOptions: { idNonce: "same" },
    model: o.model ?? { contextWindow: 110_000 },
    settings: o.settings,
    thinking: o.thinking,
    contextKeeper: WIRE_SETUP.contextKeeper,
    env: { PI_ASYNC_PREFIX_COMPACTION_TRACE: traceFile, ...o.env },
    timeoutMs: 90_000,
  });
  return { ...result, trace: readTrace(traceFile) };
}

const decisions = (r: Run) => r.trace.filter((e) => e.kind === "at_compact") as Array<TraceEvent & { decision?: string; waitEnd?: string }>;
const applies = (r: Run) => r.trace.filter((e) => e.kind === "apply").map((e) => `${e.path}:${e.outcome}${e.reason ? `:${e.reason}` : ""}`);

function expectClean(r: Run) {
  expect(r.timedOut).toBe(false);
  expect(r.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
  expect(errorRecords(r.records)).toEqual([]);
}

// Window 150k, reserve 50k: Pi's threshold 100k. Thinking off: room while the request after the
// next turn keeps 8,192 output tokens (tokens + 2 × 2.4k <= 150k − 4,096 − 8,192, about 133k).
const ROOMY_MODEL = { contextWindow: 150_000 };
const ROOMY = { compaction: { enabled: true, reserveTokens: 50_000, keepRecentTokens: 20_000 } };

describe("async compaction paths on the wire", () => {
  test("the cancel path: Pi's threshold compaction is cancelled while there is room, the job applies at a turn end", async () => {
    // The job starts at 90k (no adaptive start, about turn 37), Pi's threshold comes a few turns
    // later, the 2 s summary well before the context runs out of room. Turns after the start take
    // 400 ms, so the summary is back within the loop however fast the machine runs the turns.
    const delays = Array.from({ length: 48 }, (_, i) => (i < 36 ? 100 : 400));
    const script = [...readSteps(delays), { text: "Done.", delayMs: 0 }];
    const r = await run("cancel", {
      script,
      prompts: ["Read the data files one by one."],
      model: ROOMY_MODEL,
      settings: ROOMY,
      thinking: "off",
      env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: "0.6", PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0" },
    });
    console.log(`[compaction-paths] cancel: decisions [${decisions(r).map((d) => d.decision).join(", ")}], applies [${applies(r).join(", ")}]`);
    expectClean(r);
    expect(r.mainRequests).toHaveLength(script.length);
    expect(brokenReplies(entriesOf(r))).toEqual([]);
    expect(decisions(r).some((d) => d.decision === "cancel")).toBe(true);
    expect(decisions(r).every((d) => d.decision !== "fallback" && d.waitEnd !== "timeout")).toBe(true);
    expect(applies(r)).not.toContain("session_before_compact:rejected:sync_fallback");
    expect(applies(r)).toContain("turn_end_draft:applied");
    expect(compactionsOf(r).length).toBeGreaterThan(0);
    for (const c of compactionsOf(r)) expect(markerJobId(c)).toBeDefined();
    // Pi reported each cancelled compaction as aborted, never as an error.
    const ends = r.events.filter((e) => e.type === "compaction_end") as RpcRecord[];
    expect(ends.filter((e) => typeof e.errorMessage === "string")).toEqual([]);
  }, 120_000);

  test("the bounded wait runs out: the job is staled sync_fallback and Pi compacts on its own", async () => {
    const script = [...readSteps(Array.from({ length: 40 }, () => 0)), { text: "Done.", delayMs: 0 }];
    // 110k window, reserve 16,384, thinking on (its budget follows max_tokens): no room at Pi's threshold.
    const r = await run("wait-timeout", { script, prompts: ["Read the data files one by one."], settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 } }, env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: "0.8", PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0", PI_ASYNC_PREFIX_COMPACTION_WAIT_MS: "200" } });
    console.log(`[compaction-paths] wait-timeout: decisions [${decisions(r).map((d) => `${d.decision}${d.waitEnd ? `(${d.waitEnd})` : ""}`).join(", ")}], applies [${applies(r).join(", ")}]`);
    expectClean(r);
    const timedOut = decisions(r).find((d) => d.waitEnd === "timeout") as unknown as { decision: string; waitedMs: number } | undefined;
    console.log(`[compaction-paths] wait-timeout: ${JSON.stringify(timedOut)}`);
    expect(timedOut?.decision).toBe("wait");
    expect(timedOut?.waitedMs).toBeGreaterThanOrEqual(190);
    expect(applies(r)).toContain("session_before_compact:rejected:sync_fallback");
    expect(compactionsOf(r).some((c) => markerJobId(c) === undefined)).toBe(true); // Pi's own
  }, 120_000);

  test("compaction.enabled: false — nothing starts on its own; /async-compact-now mid-loop, ready over the hard threshold with no room: abort, compact, continue", async () => {
    // WIRE_SETUP's 40k window, reserve 8k (hard threshold 32k); usage at the turn_end after
    // request k ≈ 3,630 + 2,394·k. The command comes after 12 turns (≈ 32.4k, over the hard
    // threshold Pi would act on if enabled); answers take 1.5 s from then on, so the 2 s summary
    // is ready mid-stream, with no room for another turn.
    const delays = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1_500, 1_500, 1_500, 1_500, 1_500];
    const script = [...readSteps(delays), { text: "Done.", delayMs: 0 }, { text: "Continued.", delayMs: 0 }];
    const turnEnds = (all: readonly RpcRecord[]) => all.filter((x) => x.type === "turn_end").length;
    const r = await run("abort", {
      script,
      model: WIRE_SETUP.model,
      settings: { compaction: { ...WIRE_SETUP.settings.compaction, enabled: false } },
      thinking: "off",
      env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: WIRE_SETUP.startRatio },
      prompts: [
        { command: { type: "prompt", message: "Read the data files one by one." } },
        { waitFor: (_r, all) => turnEnds(all) >= 12, timeoutMs: 30_000 },
        { prompt: "/async-compact-now", graceMs: 0 },
        { waitFor: (rec, all) => rec.type === "agent_settled" && all.some((x) => x.type === "compaction_end") && all.lastIndexOf(rec) > all.findIndex((x) => x.type === "compaction_end"), timeoutMs: 60_000 },
      ],
    });
    console.log(`[compaction-paths] abort: applies [${applies(r).join(", ")}]`);
    expectClean(r);
    const skipped = r.trace.filter((e) => e.kind === "skipped" && (e as { reason?: string }).reason === "pi_compaction_disabled");
    expect(skipped.length).toBeGreaterThan(0);
    const starts = r.trace.filter((e) => e.kind === "transition" && e.to === "pending");
    expect(starts).toHaveLength(1); // the command's
    expect(applies(r)).toEqual(["abort_and_compact:requested", "session_before_compact:handed_off", "session_before_compact:applied"]);
    const [compaction] = compactionsOf(r);
    expect(compactionsOf(r)).toHaveLength(1);
    expect(markerJobId(compaction)).toBeDefined();
    expect(brokenReplies(entriesOf(r)).map((m) => m.stopReason)).toEqual(["aborted"]);
    const continued = entriesOf(r).filter((e) => e.type === "message" && (e.message as { role: string }).role === "user" && JSON.stringify((e.message as { content: unknown }).content).includes("continue"));
    expect(continued).toHaveLength(1);
    expect(r.notifications.map((n) => n.message)).toEqual(expect.arrayContaining(["async compaction: preparing", expect.stringMatching(/^async compaction: applied a background summary/)]));
  }, 120_000);

  test("PI_ASYNC_PREFIX_COMPACTION=0: /async-compact-now answers that it is disabled", async () => {
    const r = await run("off", { prompts: [{ prompt: "/async-compact-now", graceMs: 500 }], env: { PI_ASYNC_PREFIX_COMPACTION: "0" } });
    expectClean(r);
    expect(r.notifications.map((n) => n.message)).toContain("async compaction: disabled");
    expect(r.requests).toHaveLength(0);
    expect(r.trace).toEqual([]);
  }, 60_000);
});
