/**
 * `thinkingStrip.mode: "auto"` on the wire: on a model the policy table marks
 * drops-closed-cycle the extension sends exactly what mode `off` sends, byte for byte; on a
 * keeps-all model it strips.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { frontiersAlong } from "../support/state/flush-entries.ts";
import { resolveThinkingPolicy } from "../../src/thinking/index.ts";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, FAKE_PROVIDER, runPi, type PiRunResult, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const SONNET_45 = "claude-sonnet-4-5";
const OPUS_45 = "claude-opus-4-5";
// Flushes only at request ends, so both runs flush at the same points of the script.
// rollingWindow 1: a finished loop stays visible (stubs, thinking) for one more prompt, so the
// strip has tool turns to act on (with the default 0 the loop collapses at its own answer).
const KEEPER = {
  summarizer: { mode: "extractive" },
  pruning: { budgetTrigger: { enabled: false }, loopFlush: { enabled: false }, chainCompression: { rollingWindow: 1 } },
  compaction: { enabled: false },
};

const policy = (modelId: string) => resolveThinkingPolicy({ mode: "auto", provider: FAKE_PROVIDER, modelId, api: "anthropic-messages" });

/** Assistant messages of a request that carry no thinking block (all scripted steps think). */
function strippedCount(r: RecordedRequest): number {
  return r.body.messages.filter(
    (m) => m.role === "assistant" && Array.isArray(m.content) && !m.content.some((b) => b.type === "thinking" || b.type === "redacted_thinking"),
  ).length;
}

/** A stub's recall ref names the call as `<tool id>@<message timestamp>#<n>`. */
const maskRefTimes = (raw: string) => raw.replace(/(toolu_[A-Za-z0-9_]+)@\d+#/g, "$1@T#");
const rawBodies = (r: PiRunResult, normalize: (raw: string) => string = (x) => x) => r.requests.map((q) => normalize(q.raw));

describe("thinking strip mode auto on the wire", () => {
  const scenario = generateScenario({ seed: 23, prompts: 3, stepsPerPrompt: [7, 9], files: 6, fileBytes: [2048, 8192] });

  test("the policy table: Sonnet 4.5 drops closed-cycle thinking, Opus 4.5 keeps all", () => {
    expect(policy(SONNET_45)).toMatchObject({ behaviour: "drops-closed-cycle", strip: false });
    expect(policy(SONNET_45).row?.id).toBe("claude-sonnet-legacy");
    expect(policy(OPUS_45)).toMatchObject({ behaviour: "keeps-all", strip: true });
    expect(policy(OPUS_45).row?.id).toBe("claude-opus-current");
  });

  test("auto on a drops-closed-cycle model: every request byte-identical to mode off", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const run = (mode: string, pruning: boolean) =>
      runPi({
        prompts: scenario.prompts,
        mode: "rpc",
        workspace,
        script: scenario.steps,
        thinking: "medium",
        model: { id: SONNET_45 },
        serverOptions: { idNonce: "same" },
        contextKeeper: { ...KEEPER, ...(pruning ? {} : { pruning: { enabled: false } }), thinkingStrip: { mode, keepLastTurns: 4 } },
        timeoutMs: 30_000,
      });
    const noRefused = (r: PiRunResult) => expect(r.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);

    // Pruning off: nothing else in the extension touches the messages, so raw bodies compare as they are.
    const off = await run("off", false);
    const auto = await run("auto", false);
    const forced = await run("flush-gated", false); // the control: a strip on this script shows on the wire
    [off, auto, forced].forEach(noRefused);
    expect(auto.requests.length).toBe(scenario.steps.length);
    expect(rawBodies(auto)).toEqual(rawBodies(off));
    expect(forced.requests.length).toBe(off.requests.length);
    const differing = forced.requests.filter((r, i) => r.raw !== off.requests[i]!.raw).length;
    expect(differing).toBeGreaterThan(0);
    expect(strippedCount(forced.requests.at(-1)!)).toBeGreaterThan(0);

    // Pruning on: flushes run in both; stubs name their call with its message timestamp, which
    // differs from run to run, so those digits are masked.
    const offPruned = await run("off", true);
    const autoPruned = await run("auto", true);
    [offPruned, autoPruned].forEach(noRefused);
    expect(rawBodies(autoPruned, maskRefTimes)).toEqual(rawBodies(offPruned, maskRefTimes));
    expect(rawBodies(autoPruned).join("")).toContain("[context-keeper] output pruned");
    // auto flushed as often as off, and persisted no boundary.
    const frontiers = frontiersAlong(autoPruned.sessionEntries).map(({ frontier }) => frontier);
    expect(frontiers.length).toBeGreaterThanOrEqual(2);
    expect(frontiers.every((f) => f.thinkingStripBoundaryTimestamp === undefined)).toBe(true);

    const bytes = (r: PiRunResult) => r.requests.reduce((n, q) => n + q.raw.length, 0);
    console.log(
      `[thinking/auto] ${auto.requests.length} requests identical to off (${bytes(off)} bytes; pruned ${bytes(offPruned)}); flush-gated differs in ${differing}, ${bytes(forced)} bytes`,
    );
  }, 180_000);

  test("auto on a keeps-all model strips old thinking", async () => {
    const run = await runPi({
      prompts: scenario.prompts.slice(0, 2),
      mode: "rpc",
      files: scenario.files,
      script: [...scenario.stepsByPrompt[0]!, ...scenario.stepsByPrompt[1]!],
      thinking: "medium",
      model: { id: OPUS_45 },
      contextKeeper: { ...KEEPER, thinkingStrip: { mode: "auto", keepLastTurns: 4 } },
      timeoutMs: 30_000,
    });
    expect(run.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
    const boundaries = frontiersAlong(run.sessionEntries).map(({ frontier }) => frontier.thinkingStripBoundaryTimestamp);
    expect(boundaries.some((b) => typeof b === "number")).toBe(true);
    // The flush after prompt 1 saw its n assistant messages (one per step) and kept the last 4;
    // the boundary stays there through prompt 2's loop, so its last request strips n - 4.
    const stripped = strippedCount(run.mainRequests.at(-1)!);
    expect(stripped).toBe(scenario.stepsByPrompt[0]!.length - 4);
    console.log(`[thinking/auto opus] ${stripped} assistant messages sent without thinking in the last request`);
  }, 180_000);
});
