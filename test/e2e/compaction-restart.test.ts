/**
 * A ready background summary survives a restart: the session ends (RPC input closes) while the
 * summary is ready but not applied; a resume with another thinking level stales it with that
 * reason; a resume with the original level revalidates it and, the prompt cache having expired
 * meanwhile (a model whose cache entries live 1 s), applies it while Pi is idle: the next
 * request writes the whole context anyway (`apply-need.ts`; within the lifetime and below Pi's
 * threshold it would wait for need, `need-wiring.test.ts`).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeAnthropic } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type RunPiOptions } from "../support/pi-runner.ts";
import {
  compactionsOf,
  delayedSummaryRouter,
  entriesOf,
  errorRecords,
  expectedTail,
  isStatus,
  markerJobId,
  READY_ENTRY,
  readSteps,
  readTrace,
  renderedSummary,
  sandboxFiles,
  statusTexts,
  WIRE_SETUP,
  wireFingerprints,
  withoutCacheControl,
} from "../support/compaction/e2e-wire.ts";

const workspace = createPiWorkspace(sandboxFiles(10));
const server = startFakeAnthropic({ sideRouter: delayedSummaryRouter });
afterAll(async () => {
  await server.stop();
  workspace.cleanup();
});

const trace = join(workspace.root, "trace.jsonl");
const common: Partial<RunPiOptions> = {
  server,
  mode: "rpc",
  model: WIRE_SETUP.model,
  settings: WIRE_SETUP.settings,
  contextKeeper: WIRE_SETUP.contextKeeper,
  env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: WIRE_SETUP.startRatio, PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0", PI_ASYNC_PREFIX_COMPACTION_TRACE: trace },
  timeoutMs: 30_000,
};

type ReadyData = { snapshot: { jobId: string; thinkingLevel: string; firstKeptEntryId: string }; result: { summary: string; firstKeptEntryId: string } };

describe("a ready summary across restarts", () => {
  test("persisted when the session ends mid-run; staled on a thinking change; applied on a matching resume", async () => {
    // Run 1: the job starts at the turn_end after request 8 (see WIRE_SETUP); request 9 hangs, so
    // the summary is ready while Pi is busy. Then the RPC input closes: Pi aborts the turn (no
    // draft on an aborted turn), the job is written at agent_end, and shutdown cancels it.
    server.setScript(readSteps([0, 0, 0, 0, 0, 0, 0, 0, 0, 15_000]));
    const first = await runPi({
      ...common,
      workspace,
      thinking: "medium",
      prompts: [{ command: { type: "prompt", message: "Read the data files one by one." } }, { waitFor: isStatus("async compaction: ready"), timeoutMs: 15_000 }],
    } as RunPiOptions);
    const stored = entriesOf(first).filter((e) => e.type === "custom" && e.customType === READY_ENTRY);
    expect(stored).toHaveLength(1);
    const ready = stored[0].data as ReadyData;
    expect(ready.snapshot.thinkingLevel).toBe("medium");
    expect(compactionsOf(first)).toHaveLength(0);
    const jobId = ready.snapshot.jobId;
    const firstTrace = readTrace(trace);
    expect(firstTrace.filter((e) => e.jobId === jobId && e.kind === "transition").map((e) => `${e.cause}→${e.to}`)).toEqual([
      "start→pending",
      "settled_ok→ready",
      "persisted→ready",
      "invalidate→stale",
    ]);

    // Run 2: resumed with another thinking level: revalidation fails, never shown as ready.
    const second = await runPi({ ...common, resume: workspace, thinking: "high", prompts: [{ waitMs: 300 }] } as RunPiOptions);
    const secondTrace = readTrace(trace).slice(firstTrace.length);
    expect(secondTrace.filter((e) => e.jobId === jobId).map((e) => [e.kind, e.cause ?? e.path, e.to ?? e.outcome, e.reason])).toEqual([
      ["transition", "restored", "stale", "thinking_changed"],
      ["apply", "restore", "rejected", "thinking_changed"],
    ]);
    expect(statusTexts(second.records)).toEqual([]);
    expect(compactionsOf(second)).toHaveLength(0);

    // Run 3: resumed with the original level after the cache's lifetime: revalidated, applied
    // through Pi's compaction flow while idle, before the next prompt; that prompt's request
    // opens with the summary.
    server.setScript([{ thinking: "Resuming.", text: "Continuing from the summary." }]);
    const third = await runPi({
      ...common,
      model: { ...WIRE_SETUP.model, promptCache: { short: 1 } },
      resume: workspace,
      thinking: "medium",
      prompts: [{ waitFor: isStatus(undefined), timeoutMs: 10_000 }, "Continue."],
    } as RunPiOptions);
    const thirdTrace = readTrace(trace).slice(firstTrace.length + secondTrace.length);
    expect(thirdTrace.filter((e) => e.kind === "apply" && e.jobId === jobId).map((e) => `${e.path}:${e.outcome}`)).toEqual([
      "restore:deferred",
      "idle_compact:requested",
      "session_before_compact:handed_off",
      "session_before_compact:applied",
    ]);
    expect(statusTexts(third.records)).toEqual(["async compaction: ready", undefined]);

    const entries = entriesOf(third);
    const [compaction] = compactionsOf(third);
    expect(compactionsOf(third)).toHaveLength(1);
    expect(markerJobId(compaction)).toBe(jobId);
    expect(compaction.summary).toBe(ready.result.summary);
    expect(compaction.firstKeptEntryId).toBe(ready.snapshot.firstKeptEntryId);
    const at = (id: unknown) => entries.findIndex((e) => e.id === id);
    const prompt = entries.findIndex((e) => e.type === "message" && (e.message as { role: string }).role === "user" && at(e.id) > at(stored[0].id));
    expect(at(stored[0].id)).toBeLessThan(at(compaction.id));
    expect(at(compaction.id)).toBeLessThan(prompt);

    const [request] = third.mainRequests;
    const messages = withoutCacheControl(request.body.messages);
    expect(wireFingerprints([messages[0]])).toEqual([`text:${renderedSummary(ready.result.summary)}`]);
    expect(wireFingerprints(messages.slice(1))).toEqual(expectedTail(entries, compaction));
    expect(wireFingerprints(messages).at(-1)).toBe("text:Continue.");

    for (const r of [first, second, third]) {
      expect(r.timedOut).toBe(false);
      expect(errorRecords(r.records)).toEqual([]);
    }
    expect(server.rejected()).toEqual([]);
  }, 60_000);
});
