/**
 * Pruning on the wire: the real pi CLI with this extension against the fake Anthropic
 * server, compared with bare pi on the same script in the same workspace.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { analyze, bustIndices, frontierEntryTimes, firstRequestsAfterFlush, messagesChars, withoutCacheControl } from "./support/wire-checks.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

// A 1M window keeps bare pi from compacting, so the comparison is pruning vs nothing.
const BIG_WINDOW = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
// The in-loop triggers (budget, and when it pays) are exercised separately; here flushes come at request ends.
const REQUEST_END_ONLY = { pruning: { budgetTrigger: { enabled: false }, loopFlush: { enabled: false } }, summarizer: { mode: "extractive" } };

describe("pruning on the wire", () => {
  const scenario = generateScenario({ seed: 5, prompts: 3, stepsPerPrompt: [10, 12], files: 8, fileBytes: [2048, 40960] });

  test("0 busts between flushes, ≤ 1 bust per request, ≥ 50% smaller history, no 400, no orphans", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const common = { prompts: scenario.prompts, mode: "rpc" as const, workspace, model: BIG_WINDOW, serverOptions: { idNonce: "same" } };
    const bare = await runPi({ ...common, script: scenario.steps, extension: false });
    const keep = await runPi({ ...common, script: scenario.steps, contextKeeper: REQUEST_END_ONLY });

    expect(keep.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    expect(keep.mainRequests.length).toBe(bare.mainRequests.length);
    expect(scenario.stepsByPrompt.every((s) => s.length >= 11)).toBe(true);

    const analyses = analyze(keep.mainRequests);
    const flushes = frontierEntryTimes(keep.sessionEntries);
    expect(flushes.length).toBeGreaterThanOrEqual(2);
    const afterFlush = firstRequestsAfterFlush(keep.mainRequests, flushes);
    const busts = bustIndices(analyses);
    // (1) every bust sits on the first request after a flush: none between flushes
    expect(busts.filter((i) => !afterFlush.has(i))).toEqual([]);
    // (2) at most one bust per user request
    expect(busts.length).toBeLessThanOrEqual(scenario.prompts.length);
    // (4) no pairing violations
    expect(analyses.reduce((n, a) => n + a.pairingViolations.length, 0)).toBe(0);

    // (3) by the last request the history is at least 50% smaller than bare pi's
    const bareChars = messagesChars(bare.mainRequests.at(-1)!);
    const keepChars = messagesChars(keep.mainRequests.at(-1)!);
    console.log(`[pruning] last request history: bare ${bareChars} chars, keeper ${keepChars} chars (${((1 - keepChars / bareChars) * 100).toFixed(1)}% smaller); busts at ${busts.join(",")}`);
    expect(keepChars).toBeLessThanOrEqual(bareChars * 0.5);

    // The current tool loop always goes out exactly as bare pi sends it.
    for (const p of keep.prompts) {
      const first = keep.mainRequests.indexOf(p.requests[0]!);
      expect(first).toBeGreaterThanOrEqual(0);
    }
    const lastKeep = withoutCacheControl(keep.mainRequests.at(-1)!.body.messages);
    const lastBare = withoutCacheControl(bare.mainRequests.at(-1)!.body.messages);
    const loop = scenario.stepsByPrompt.at(-1)!.length * 2 - 1; // last prompt's assistant+results after its user message
    expect(JSON.stringify(lastKeep.slice(-loop))).toBe(JSON.stringify(lastBare.slice(-loop)));
  }, 180_000);

  test("a restart (--continue) renders the history byte-identical to the request before it", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const settings = { model: BIG_WINDOW, contextKeeper: REQUEST_END_ONLY, mode: "rpc" as const };
    // p1, p2 run their loops; a short question is answered with a provider error (no flush
    // follows an error), then pi stops; resumed, p3 runs its loop.
    const [p1, p2, p3] = [scenario.stepsByPrompt[0]!, scenario.stepsByPrompt[1]!, scenario.stepsByPrompt[2]!];
    const errorStep = { error: { status: 500, type: "api_error", message: "overloaded" } };
    const { startFakeAnthropic } = await import("../support/fake-anthropic/index.ts");
    const server = startFakeAnthropic({ script: [...p1, ...p2, errorStep, ...p3], idNonce: "same" });
    try {
      const before = await runPi({ ...settings, server, workspace, prompts: [scenario.prompts[0]!, scenario.prompts[1]!, "Quick check: is the build green?"] });
      const resumed = await runPi({ ...settings, server, resume: workspace, prompts: [scenario.prompts[2]!] });
      expect(resumed.requests.filter((r) => r.status !== 200)).toHaveLength(0);
      const last = withoutCacheControl(before.mainRequests.at(-1)!.body.messages);
      const first = withoutCacheControl(resumed.mainRequests[0]!.body.messages);
      // Everything before the unanswered question is byte-identical across the restart: with
      // the default rollingWindow 0 the two finished loops are collapsed chains by then.
      const history = last.length - 1;
      expect(history).toBeGreaterThanOrEqual(6);
      expect(JSON.stringify(last.slice(0, history))).toContain("[context-keeper] compressed tool chain");
      expect(JSON.stringify(first.slice(0, history))).toBe(JSON.stringify(last.slice(0, history)));
      // and the resumed session's tool loop keeps reading the cache
      expect(bustIndices(analyze(resumed.mainRequests)).filter((i) => i > 0)).toEqual([]);
    } finally {
      server.stop();
    }
  }, 180_000);
});
