/**
 * Pruning and async compaction together on the wire (the keeper's default settings: pruning
 * on), beside bare Pi on the same script: the 110k threshold scenario of `threshold-wire.ts`.
 * A budget flush and a compaction apply never rewrite the cache close together (no two busts
 * within 3 requests), and with 0.5 s answers the session costs no more than bare Pi's.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createPiWorkspace, type PiRunResult, type PiWorkspace, runPi } from "../support/pi-runner.ts";
import { compactionsOf, delayedSummaryRouter, errorRecords, markerJobId, readTrace, sandboxFiles, type TraceEvent } from "../support/compaction/e2e-wire.ts";
import { bustIndices, FILES, longestStall, loopRequests, mainUsage, PROMPTS, THRESHOLD_SETUP, thresholdScript, wireCost } from "../support/compaction/threshold-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));
const workspace = createPiWorkspace(sandboxFiles(FILES));
workspaces.push(workspace);

type Run = PiRunResult & { trace: TraceEvent[] };

async function run(arm: "keeper" | "bare", delayMs: number): Promise<Run> {
  const traceFile = join(workspace.root, `coop-${arm}-${delayMs}.jsonl`);
  const result = await runPi({
    prompts: PROMPTS,
    mode: "rpc",
    workspace,
    extension: arm === "keeper",
    script: thresholdScript(delayMs),
    sideRouter: delayedSummaryRouter,
    serverOptions: { idNonce: "same" },
    model: THRESHOLD_SETUP.model,
    settings: THRESHOLD_SETUP.settings,
    env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: THRESHOLD_SETUP.startRatio, PI_ASYNC_PREFIX_COMPACTION_TRACE: traceFile },
    timeoutMs: 150_000,
  });
  return { ...result, trace: readTrace(traceFile) };
}

describe("pruning and compaction cooperate (110k window, 2 s summaries, pruning on)", () => {
  // With fast answers the summary cannot be ready before Pi's threshold; the job started at
  // START_RATIO 0.5 leaves a larger kept tail than bare Pi's summary, and the run costs more
  // (doc/async-compaction.md has the figures): the cost bound is asserted for 0.5 s answers.
  for (const delayMs of [0, 500]) test(`answers after ${delayMs} ms: busts far apart, every compaction the extension's${delayMs ? ", no more cost than bare Pi" : ""}`, async () => {
    const keeper = await run("keeper", delayMs);
    const bare = await run("bare", delayMs);
    for (const [label, r] of [["keeper", keeper], ["bare", bare]] as const) {
      console.log(
        `[compaction-cooperation] ${label}: busts at main requests [${bustIndices(r.mainRequests).join(", ")}] of ${r.mainRequests.length}; ` +
          `compactions ${compactionsOf(r).length}; side requests ${r.sideRequests.length}; longest stall ${longestStall(loopRequests(r.mainRequests), delayMs).stallMs} ms; ` +
          `cost $${wireCost(r.requests).toFixed(4)} (main ${JSON.stringify(mainUsage(r.mainRequests))})`,
      );
    }
    expect(keeper.timedOut).toBe(false);
    expect(errorRecords(keeper.records)).toEqual([]);
    expect(keeper.requests.filter((q) => q.status !== 200)).toEqual([]);
    for (const c of compactionsOf(keeper)) expect(markerJobId(c)).toBeDefined();
    const busts = bustIndices(keeper.mainRequests);
    const close = busts.filter((b, i) => i > 0 && b - busts[i - 1] <= 3);
    expect(close).toEqual([]);
    if (delayMs > 0) expect(wireCost(keeper.requests)).toBeLessThanOrEqual(wireCost(bare.requests));
  }, 300_000);
});
