/**
 * The warming override on the wire: while an async compaction job is pending, Pi's idle cache
 * warming would pay to keep alive a prefix the apply is about to discard, so the keeper answers
 * `cache_warming_decision` with "stop" (`compactionStopsWarming`). The same script with the
 * keeper's compaction off shows that Pi would have warmed.
 *
 * Setup: WIRE_SETUP's 40k window, a 12 s prompt-cache lifetime (Pi refreshes 2 s after the last
 * request), cache writes priced high enough that Pi's idle economics say "warm", thinking off
 * (a refresh must be replayable), and a summary that takes 6 s, so the job is still pending
 * when the refresh comes due after the prompt's last answer.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { RequestClassifier, SideRouter } from "../support/fake-anthropic/index.ts";
import { classifyRequest, PI_SUMMARIZATION_PROMPT_START, systemText } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, type PiRunResult, type PiWorkspace, runPi } from "../support/pi-runner.ts";
import { readSteps, readTrace, sandboxFiles, summaryText, type TraceEvent, WIRE_SETUP } from "../support/compaction/e2e-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));
const workspace = createPiWorkspace(sandboxFiles(10));
workspaces.push(workspace);

const SLOW_SUMMARY_MS = 6_000;
const slowSummary: SideRouter = ({ request, kindIndex }) =>
  systemText(request.body).includes(PI_SUMMARIZATION_PROMPT_START) ? { text: summaryText(kindIndex), delayMs: SLOW_SUMMARY_MS } : { text: `side answer #${kindIndex}` };
/** A cache refresh replays the last request with a one-token output cap: side, not a script step. */
const isRefresh = (body: { max_tokens?: number }) => body.max_tokens === 1;
const classify: RequestClassifier = (body) => (isRefresh(body) ? "side" : classifyRequest(body));

// 9 reads (the job starts at the turn_end after request 8, see WIRE_SETUP), then the answer.
const SCRIPT = [...readSteps(Array.from({ length: 9 }, () => 0)), { text: "Done reading.", delayMs: 0 }];

async function run(arm: "keeper" | "compaction-off"): Promise<PiRunResult & { trace: TraceEvent[] }> {
  const traceFile = join(workspace.root, `warming-${arm}.jsonl`);
  const result = await runPi({
    prompts: ["Read the data files one by one.", { waitMs: 4_500 }],
    mode: "rpc",
    workspace,
    script: SCRIPT,
    sideRouter: slowSummary,
    classify,
    serverOptions: { idNonce: "same" },
    model: { ...WIRE_SETUP.model, promptCache: { short: 12 }, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 300 } },
    settings: { ...WIRE_SETUP.settings, cacheWarming: "idle" },
    thinking: "off",
    contextKeeper: arm === "keeper" ? WIRE_SETUP.contextKeeper : { ...WIRE_SETUP.contextKeeper, compaction: { enabled: false } },
    env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: WIRE_SETUP.startRatio, PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0", PI_ASYNC_PREFIX_COMPACTION_TRACE: traceFile },
    timeoutMs: 60_000,
  });
  return { ...result, trace: readTrace(traceFile) };
}

describe("cache warming while a compaction job is pending", () => {
  test("Pi would refresh the idle prefix; with a job pending the keeper stops it", async () => {
    const off = await run("compaction-off");
    const keeper = await run("keeper");
    const refreshes = (r: PiRunResult) => r.requests.filter((q) => isRefresh(q.body as { max_tokens?: number }));
    console.log(`[compaction-warming] refreshes: compaction off ${refreshes(off).length}, keeper with a pending job ${refreshes(keeper).length}`);
    expect(off.mainRequests).toHaveLength(SCRIPT.length);
    expect(keeper.mainRequests).toHaveLength(SCRIPT.length);
    expect(refreshes(off).length).toBeGreaterThan(0);
    // The job was pending over the whole idle wait (started, never ready before the end).
    const started = keeper.trace.find((e) => e.kind === "transition" && e.to === "pending");
    expect(started).toBeDefined();
    expect(keeper.trace.some((e) => e.kind === "transition" && e.to === "ready")).toBe(false);
    expect(refreshes(keeper)).toHaveLength(0);
  }, 90_000);
});
