/**
 * No synchronous fallback while a job is in flight, measured on the wire: the real pi CLI with
 * this extension against the fake Anthropic server (110k window, 2 s summaries, see
 * `threshold-wire.ts`), beside bare Pi on the same script. With fast model answers the context
 * crosses Pi's threshold while the job is still pending: the extension cancels Pi's threshold
 * compaction while there is room and waits (bounded) for the job when there is none. With
 * 0.5 s answers the job is ready before the threshold and applies as a turn_end draft.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createPiWorkspace, type PiRunResult, type PiWorkspace, runPi } from "../support/pi-runner.ts";
import { brokenReplies, compactionsOf, delayedSummaryRouter, entriesOf, errorRecords, markerJobId, readTrace, sandboxFiles, type TraceEvent } from "../support/compaction/e2e-wire.ts";
import { FILES, longestStall, mainUsage, loopRequests, PROMPTS, THRESHOLD_SETUP, thresholdScript, wireCost } from "../support/compaction/threshold-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));
const workspace = createPiWorkspace(sandboxFiles(FILES));
workspaces.push(workspace);

type Run = PiRunResult & { trace: TraceEvent[] };

async function run(arm: "extension" | "bare", delayMs: number): Promise<Run> {
  const traceFile = join(workspace.root, `trace-${arm}-${delayMs}.jsonl`);
  const script = thresholdScript(delayMs);
  const result = await runPi({
    prompts: PROMPTS,
    mode: "rpc",
    workspace,
    extension: arm === "extension",
    script,
    sideRouter: delayedSummaryRouter,
    serverOptions: { idNonce: "same" },
    model: THRESHOLD_SETUP.model,
    settings: THRESHOLD_SETUP.settings,
    contextKeeper: THRESHOLD_SETUP.contextKeeper,
    env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: THRESHOLD_SETUP.startRatio, PI_ASYNC_PREFIX_COMPACTION_TRACE: traceFile },
    timeoutMs: 150_000,
  });
  return { ...result, trace: readTrace(traceFile) };
}

function describeRun(label: string, r: Run, delayMs: number): string {
  const stall = longestStall(loopRequests(r.mainRequests), delayMs);
  const decisions = r.trace.filter((e) => e.kind === "at_compact").map((e) => `${(e as { decision?: string }).decision}${(e as { waitedMs?: number }).waitedMs !== undefined ? `(${(e as { waitedMs?: number }).waitedMs} ms)` : ""}`);
  return `${label}: longest stall ${stall.stallMs} ms (before loop request ${stall.atRequest}, usual overhead ${stall.overheadMs} ms); compactions ${compactionsOf(r).length} (${compactionsOf(r).map((c) => (markerJobId(c) ? "extension" : "pi")).join(", ")}); summary requests ${r.sideRequests.length}; cost $${wireCost(r.requests).toFixed(4)} (main ${JSON.stringify(mainUsage(r.mainRequests))}, summaries $${wireCost(r.sideRequests).toFixed(4)}); at-compact decisions [${decisions.join(", ")}]`;
}

function expectClean(r: Run, steps: number) {
  expect(r.timedOut).toBe(false);
  expect(r.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
  expect(errorRecords(r.records)).toEqual([]);
  expect(r.mainRequests.length).toBeGreaterThanOrEqual(steps);
  expect(compactionsOf(r).length).toBeGreaterThan(0);
}

describe("no synchronous fallback while a job is in flight (110k window, 2 s summaries)", () => {
  for (const delayMs of [0, 500]) {
    test(`answers after ${delayMs} ms: every compaction is the extension's, and the loop stalls far less than bare Pi`, async () => {
      const steps = thresholdScript(delayMs).length;
      const ext = await run("extension", delayMs);
      const bare = await run("bare", delayMs);
      console.log(`[compaction-threshold] ${describeRun(`extension, ${delayMs} ms answers`, ext, delayMs)}`);
      console.log(`[compaction-threshold] ${describeRun(`bare, ${delayMs} ms answers`, bare, delayMs)}`);
      expectClean(ext, steps);
      expectClean(bare, steps);
      expect(ext.mainRequests).toHaveLength(steps); // nothing aborted and re-asked
      expect(brokenReplies(entriesOf(ext))).toEqual([]);
      for (const c of compactionsOf(ext)) expect(markerJobId(c)).toBeDefined();
      expect(ext.trace.filter((e) => e.kind === "apply" && e.reason === "sync_fallback")).toEqual([]);
      const extStall = longestStall(loopRequests(ext.mainRequests), delayMs).stallMs;
      const bareStall = longestStall(loopRequests(bare.mainRequests), delayMs).stallMs;
      expect(bareStall).toBeGreaterThanOrEqual(3_500); // two 2 s summary calls
      // Issue #12's targets are < 1.5 s (fast answers) and < 0.5 s (0.5 s answers); the 0.5 s one is
      // asserted with the keeper's defaults in compaction-cooperation.test.ts, the 1.5 s one is not
      // met. Here, pruning off, fast answers run ~20 ms a turn: the job starts at the adaptive floor
      // (36,384 tokens) and Pi's threshold comes 23 turns (~0.5 s) later, so the bounded wait is what
      // is left of the 2 s summary (1.53–1.65 s seen): physics, not a fallback. The guard is one
      // summary plus the apply (2.4 s; bare Pi waits for two summaries in a row); the figure is printed above.
      expect(extStall).toBeLessThan(delayMs === 0 ? 2_400 : 500);
      console.log(`[compaction-threshold] ${delayMs} ms answers: extension/bare cost ${(wireCost(ext.requests) / wireCost(bare.requests)).toFixed(3)}×`);
    }, 200_000);
  }
});
