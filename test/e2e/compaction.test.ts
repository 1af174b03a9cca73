/**
 * Async compaction on the wire: the real pi CLI with this extension against the fake Anthropic
 * server, whose answer to Pi's compaction prompt is delayed by 2 s. The same script is run with
 * bare Pi (synchronous compaction at its threshold) to measure how long each blocks the loop.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, type PiRunResult, type PiWorkspace, runPi } from "../support/pi-runner.ts";
import {
  blockedAtBoundary,
  brokenReplies,
  compactionsOf,
  delayedSummaryRouter,
  entriesOf,
  errorRecords,
  expectedTail,
  firstSummarizedRequest,
  markerJobId,
  readSteps,
  readTrace,
  renderedSummary,
  sandboxFiles,
  statusTexts,
  SUMMARY_DELAY_MS,
  WIRE_SETUP,
  wireFingerprints,
  withoutCacheControl,
} from "../support/compaction/e2e-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

// 13 reads, then a final answer. Requests 8–12 are answered after 800 ms each, so the loop keeps
// going while the summary (started at the turn_end after request 8, see WIRE_SETUP) is pending.
const DELAYS = [0, 0, 0, 0, 0, 0, 0, 0, 800, 800, 800, 800, 800, 0];
const SCRIPT = [...readSteps(DELAYS.slice(0, 13)), { thinking: "All files read.", text: "Done reading.", delayMs: DELAYS[13] }];
const SUMMARY_PREFIX = renderedSummary("").slice(0, 40);

const workspace = createPiWorkspace(sandboxFiles(13));
workspaces.push(workspace);

type Arm = "extension" | "bare" | "disabled";

/** One arm on the shared workspace (same cwd, so the system prompts match), each a new session. */
async function run(arm: Arm): Promise<PiRunResult & { trace: string }> {
  const trace = join(workspace.root, `trace-${arm}.jsonl`);
  const result = await runPi({
    prompts: ["Read the data files one by one."],
    mode: "rpc",
    workspace,
    extension: arm !== "bare",
    script: SCRIPT,
    sideRouter: delayedSummaryRouter,
    serverOptions: { idNonce: "same" },
    model: WIRE_SETUP.model,
    settings: WIRE_SETUP.settings,
    contextKeeper: arm === "disabled" ? { ...WIRE_SETUP.contextKeeper, compaction: { enabled: false } } : WIRE_SETUP.contextKeeper,
    // The start stays at the configured ratio (the adaptive start is measured in compaction-threshold.test.ts).
    env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: WIRE_SETUP.startRatio, PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0", PI_ASYNC_PREFIX_COMPACTION_TRACE: trace },
    timeoutMs: 40_000,
  });
  return { ...result, trace };
}

let bareRun: (PiRunResult & { trace: string }) | undefined;

/** The request after the compaction opens with Pi's summary message and the kept tail, verbatim. */
function expectSummaryThenTail(r: PiRunResult, after: RecordedRequest, before: RecordedRequest) {
  const [compaction] = compactionsOf(r);
  const messages = withoutCacheControl(after.body.messages);
  expect(messages[0].role).toBe("user");
  expect(wireFingerprints([messages[0]])).toEqual([`text:${renderedSummary(String(compaction.summary))}`]);
  const tail = messages.slice(1);
  expect(wireFingerprints(tail)).toEqual(expectedTail(entriesOf(r), compaction));
  // Byte for byte: all of the tail but the newest step (assistant + tool result) was already
  // sent in the request before, as the end of its context.
  const previous = withoutCacheControl(before.body.messages);
  const overlap = tail.length - 2;
  expect(overlap).toBeGreaterThan(0);
  expect(tail.slice(0, overlap)).toEqual(previous.slice(previous.length - overlap));
}

describe("async compaction on the wire", () => {
  test("the summary is made while the loop runs, applied at a turn boundary, and blocks nothing; bare Pi blocks for the summary", async () => {
    const ext = await run("extension");
    const bare = await run("bare");
    bareRun = bare;

    for (const r of [ext, bare]) {
      expect(r.timedOut).toBe(false);
      expect(r.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
      expect(r.mainRequests).toHaveLength(SCRIPT.length);
      expect(errorRecords(r.records)).toEqual([]);
      expect(brokenReplies(entriesOf(r))).toEqual([]);
      expect(compactionsOf(r)).toHaveLength(1);
    }

    // Extension: one background summary, overlapping main-loop requests.
    const [summaryRequest] = ext.sideRequests;
    expect(ext.sideRequests).toHaveLength(1);
    const pendingUntil = summaryRequest.arrivedAtMs + SUMMARY_DELAY_MS;
    const overlapping = ext.mainRequests.filter((m) => m.arrivedAtMs > summaryRequest.arrivedAtMs && m.arrivedAtMs < pendingUntil);
    expect(overlapping.length).toBeGreaterThanOrEqual(2);

    // Applied as this extension's compaction, through the turn_end draft, not by aborting.
    const [extCompaction] = compactionsOf(ext);
    expect(extCompaction.fromHook).toBe(true);
    expect(String(extCompaction.summary)).toContain("Delayed scripted summary #0");
    const jobId = markerJobId(extCompaction);
    const applies = readTrace(ext.trace).filter((e) => e.kind === "apply" && e.jobId === jobId);
    expect(applies.map((e) => `${e.path}:${e.outcome}`)).toEqual(["idle_compact:deferred", "turn_end_draft:handed_off", "turn_end_draft:applied"]);
    expect(statusTexts(ext.records)).toEqual(["async compaction: preparing", "async compaction: ready", undefined]);

    // The first request after it: summary, then the kept tail, verbatim and in order.
    const extBoundary = firstSummarizedRequest(ext.mainRequests, SUMMARY_PREFIX);
    expect(extBoundary).toBeGreaterThan(0);
    expect(ext.mainRequests[extBoundary].arrivedAtMs).toBeGreaterThan(pendingUntil);
    expectSummaryThenTail(ext, ext.mainRequests[extBoundary], ext.mainRequests[extBoundary - 1]);

    // Bare Pi: its own summary at the threshold, before request 13 (see WIRE_SETUP).
    const bareBoundary = firstSummarizedRequest(bare.mainRequests, SUMMARY_PREFIX);
    expect(bareBoundary).toBe(13);
    expect(compactionsOf(bare)[0].fromHook).not.toBe(true);
    expectSummaryThenTail(bare, bare.mainRequests[bareBoundary], bare.mainRequests[bareBoundary - 1]);

    const extBlocked = blockedAtBoundary(ext.mainRequests, DELAYS, extBoundary);
    const bareBlocked = blockedAtBoundary(bare.mainRequests, DELAYS, bareBoundary);
    const bareSummaryToNext = bare.mainRequests[bareBoundary].arrivedAtMs - bare.sideRequests[0].arrivedAtMs;
    console.log(
      `[compaction] main loop blocked at the compaction boundary: extension ${extBlocked.blockedMs} ms ` +
        `(gap ${extBlocked.gapMs} ms before request ${extBoundary}, usual overhead ${extBlocked.overheadMs} ms); ` +
        `bare ${bareBlocked.blockedMs} ms (gap ${bareBlocked.gapMs} ms before request ${bareBoundary}, usual overhead ${bareBlocked.overheadMs} ms; ` +
        `summary request → next main request ${bareSummaryToNext} ms)`,
    );
    expect(extBlocked.blockedMs).toBeLessThan(500);
    // Bare Pi's gap holds the whole summary (the server answers it after SUMMARY_DELAY_MS); the
    // median overhead subtracted from it is an estimate, so the bound is on the gap's excess.
    expect(bareBlocked.blockedMs + bareBlocked.overheadMs).toBeGreaterThanOrEqual(SUMMARY_DELAY_MS);
    expect(bareSummaryToNext).toBeGreaterThanOrEqual(SUMMARY_DELAY_MS);
  }, 60_000);

  test("contextKeeper.compaction.enabled = false: bare Pi's messages byte for byte, its own compaction, no status line", async () => {
    expect(bareRun).toBeDefined(); // from the test above
    const disabled = await run("disabled");
    // Other features still add their tools to the request; the conversation is bare Pi's.
    const conversation = (r: RecordedRequest) => JSON.stringify(r.body.messages);
    expect(disabled.requests.map(conversation)).toEqual(bareRun!.requests.map(conversation));
    expect(firstSummarizedRequest(disabled.mainRequests, SUMMARY_PREFIX)).toBe(13);
    expect(compactionsOf(disabled)).toHaveLength(1);
    expect(compactionsOf(disabled)[0].fromHook).not.toBe(true);
    expect(statusTexts(disabled.records)).toEqual([]);
    expect(existsSync(disabled.trace)).toBe(false); // no lifecycle event at all
  }, 40_000);
});
