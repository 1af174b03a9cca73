/**
 * Reasoning bound to its prefix on the wire (issue 23 item 4): the real pi on a managed-effort
 * Claude model (`compat.supportsMidConvoEffort`, as pi-ai's registry has Opus 5: pi-ai sends
 * `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`) against the fake Anthropic
 * server, which drops every thinking block whose earlier conversation changed and reports it
 * (test/support/fake-anthropic/binding.ts); pi-ai records that on the assistant message.
 *
 * - Bare Pi never edits history: nothing is dropped. The keeper's flushes rewrite it: the thinking
 *   after each rewrite is dropped, and the gate priced it (`/keeper why`: the thinking each
 *   applied rewrite drops, at the output price).
 * - What was dropped is read from Pi's diagnostics: `/keeper cache` and the report on the
 *   keeper's recording count the requests the server reported, and Pi recorded on each answer
 *   what the server said.
 * - The same session on a model without bound thinking: nothing dropped, no reasoning figures.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/index.ts";
import { wireCost } from "../support/compaction/threshold-wire.ts";
import { ARMS } from "../../src/report/arms.ts";
import { reportSession } from "../../src/report/session-report.ts";
import { createPiWorkspace, runPi, type PiRunResult, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { expectCleanRun } from "./support/wire-checks.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

/** Opus 5 as pi-ai's registry describes it (dist/providers/data/anthropic.json), prices included. */
const OPUS_5 = { id: "claude-opus-5", contextWindow: 1_000_000, cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } };
const MANAGED = { supportsMidConvoEffort: true, supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true, forceAdaptiveThinking: true };
const KEEPER = { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" } };

const droppedOnWire = (r: RecordedRequest) => r.response?.inputTransformations?.length ?? 0;
const cacheView = (r: PiRunResult) => r.notifications.map((n) => n.message).find((m) => m.startsWith("Prompt cache:")) ?? "";
const whyView = (r: PiRunResult) => r.notifications.map((n) => n.message).find((m) => m.startsWith("Last decision")) ?? "";
/** Per answer in the session file, the thinking blocks Pi recorded as dropped (anthropic_input_transformations). */
const recordedDrops = (r: PiRunResult): number[] =>
  r.sessionEntries
    .filter((e) => e.type === "message" && (e.message as { role?: string }).role === "assistant")
    .map((e) =>
      (((e.message as { diagnostics?: Array<{ type: string; details?: { transformations?: Array<{ type?: string }> } }> }).diagnostics ?? [])
        .filter((d) => d.type === "anthropic_input_transformations")
        .flatMap((d) => d.details?.transformations ?? [])
        .filter((t) => t.type === "thinking_dropped").length),
    );

describe("reasoning bound to its prefix", () => {
  const scenario = generateScenario({ seed: 31, prompts: 5, stepsPerPrompt: [5, 8], files: 10, fileBytes: [8192, 32768], thinkingChars: [1500, 4000] });

  const run = async (o: { extension: boolean; compat: Record<string, unknown> }) => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const server = startFakeAnthropic({ script: scenario.steps, idNonce: "same" });
    try {
      const prompts = o.extension ? [...scenario.prompts, "/keeper cache --detail", "/keeper why --detail"] : scenario.prompts;
      const r = await runPi({ server, prompts, mode: "rpc", workspace, model: OPUS_5, contextKeeper: KEEPER, thinking: "high", timeoutMs: 180_000, ...o });
      expectCleanRun(r, scenario.steps.length);
      return r;
    } finally {
      await server.stop();
    }
  };

  test("managed-effort model: only the keeper's rewrites drop thinking; the gate priced it; /keeper cache and the report count what Pi recorded", async () => {
    const bare = await run({ extension: false, compat: MANAGED });
    const keeper = await run({ extension: true, compat: MANAGED });
    expect(keeper.mainRequests[0]!.body.thinking).toMatchObject({ type: "adaptive", block_binding: { prefix_mismatch_behavior: "drop_block" } });
    expect(bare.mainRequests.map(droppedOnWire).every((n) => n === 0)).toBe(true);
    const wire = keeper.mainRequests.map(droppedOnWire);
    const withDrops = wire.filter((n) => n > 0).length;
    expect(withDrops).toBeGreaterThan(0);
    // Pi recorded on each answer what the server reported for its request.
    expect(recordedDrops(keeper)).toEqual(wire);
    expect(cacheView(keeper)).toContain(`reported on ${withDrops} requests`);
    expect(cacheView(keeper)).toMatch(/Reasoning: the provider dropped \d+ thinking blocks? the model had written, reported on/);
    expect(cacheView(keeper)).toContain("Reasoning dropped, as the provider gave the reason: prefix_mismatch.");
    // Every applied rewrite was priced with the thinking it drops.
    const details = whyView(keeper);
    expect(details).toContain("thinking dropped = ");
    expect(details).toContain("tokens of the model's later thinking (reasoning bound to its prefix) × output");
    const text = `${keeper.sessionEntries.map((e) => JSON.stringify(e)).join("\n")}\n`;
    const report = reportSession({ file: "bound.jsonl", text, arms: ARMS.filter((a) => a.name === "bare" || a.name === "keeper"), summaries: "size-model" }).report;
    expect(report.reasoning_dropped?.requests).toBe(withDrops);
    console.log(
      `[bound reasoning] Opus 5 (drop_block): thinking blocks dropped on the wire per request ${wire.join("")} (bare: none); cost bare $${wireCost(bare.requests).toFixed(4)}, keeper $${wireCost(keeper.requests).toFixed(4)}\n` +
        `  ${cacheView(keeper).split("\n").find((l) => l.startsWith("Reasoning:"))}\n  report: ${JSON.stringify(report.reasoning_dropped)}\n  ` +
        details.split("\n").filter((l) => l.includes("later thinking")).slice(0, 5).join("\n  "),
    );
  }, 600_000);

  test("the same session on a model without bound thinking: nothing dropped, no reasoning figures, no reasoning term", async () => {
    const keeper = await run({ extension: true, compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true, forceAdaptiveThinking: true } });
    expect((keeper.mainRequests[0]!.body.thinking as { block_binding?: unknown }).block_binding).toBeUndefined();
    expect(keeper.mainRequests.every((r) => droppedOnWire(r) === 0)).toBe(true);
    expect(cacheView(keeper)).not.toContain("Reasoning:");
    expect(whyView(keeper)).not.toContain("later thinking");
  }, 600_000);
});
