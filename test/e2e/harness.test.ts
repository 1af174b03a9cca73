/**
 * The wire-level harness itself, end to end: real pi CLI (bare, no extension) against the fake
 * Anthropic server on a generated session; plus the runner's RPC extras (slash command +
 * notifications, print mode, resume with --continue).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedRequest, WireBlock, WireMessage } from "../support/fake-anthropic/index.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/index.ts";
import { runPi } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";

function withoutCacheControl(messages: WireMessage[]): unknown[] {
  return JSON.parse(JSON.stringify(messages, (k, v) => (k === "cache_control" ? undefined : v))) as unknown[];
}

/** Index of the first request whose messages do not extend the previous request's, or -1. */
function firstNonAppend(requests: RecordedRequest[]): number {
  for (let i = 1; i < requests.length; i++) {
    const prev = withoutCacheControl(requests[i - 1].body.messages);
    const next = withoutCacheControl(requests[i].body.messages);
    if (next.length <= prev.length) return i;
    if (JSON.stringify(next.slice(0, prev.length)) !== JSON.stringify(prev)) return i;
  }
  return -1;
}

function blocks(m: WireMessage): WireBlock[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
}

describe("bare pi on a generated session", () => {
  // 3 prompts × (14–16 tool steps + 1 answer) ⇒ between 45 and 51 main requests.
  const scenario = generateScenario({ seed: 42, prompts: 3, stepsPerPrompt: [14, 16], files: 8, fileBytes: [2048, 6144] });

  test("every scripted step is requested, nothing is rejected, history grows append-only", async () => {
    const run = await runPi({ prompts: scenario.prompts, script: scenario.steps, files: scenario.files, extension: false });
    expect(run.timedOut).toBe(false);
    expect(run.exitCode).toBe(0);
    expect(scenario.stats.mainRequests).toBeGreaterThanOrEqual(40);

    // every request recorded, all of them main, none answered 400
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    expect(run.sideRequests).toHaveLength(0);
    expect(run.mainRequests).toHaveLength(scenario.stats.mainRequests);
    expect(run.prompts.map((p) => p.requests.length)).toEqual(scenario.stepsByPrompt.map((s) => s.length));
    expect(run.prompts.every((p) => p.settled?.type === "agent_settled")).toBe(true);

    // append-only within each prompt, and (bare Pi) across the whole run
    for (const p of run.prompts) expect(firstNonAppend(p.requests)).toBe(-1);
    expect(firstNonAppend(run.mainRequests)).toBe(-1);

    // tools and system prompt are byte-identical on every request
    const head = (r: RecordedRequest) => JSON.stringify([r.body.tools, r.body.system]);
    expect(new Set(run.mainRequests.map(head)).size).toBe(1);

    // Pi's real tools ran on the sandbox: results carry file text; failing calls came back as errors
    const last = run.mainRequests.at(-1)!.body.messages;
    const results = last.flatMap(blocks).filter((b) => b.type === "tool_result");
    expect(results).toHaveLength(scenario.stats.toolCalls);
    const sampleLine = Object.values(scenario.files)[0].split("\n")[1];
    expect(results.some((b) => JSON.stringify(b.content).includes(sampleLine.slice(0, 40)))).toBe(true);
    expect(results.filter((b) => b.is_error === true).length).toBeGreaterThanOrEqual(scenario.stats.failingCalls);
    const parallelTurns = last.filter((m) => m.role === "assistant" && blocks(m).filter((b) => b.type === "tool_use").length > 1);
    expect(parallelTurns).toHaveLength(scenario.stats.parallelSteps);
    // thinking came back signed on every assistant turn
    const assistants = last.filter((m) => m.role === "assistant");
    expect(assistants.every((m) => blocks(m)[0].type === "thinking" && typeof blocks(m)[0].signature === "string")).toBe(true);

    // the session file was written: one message entry per assistant turn at least
    const messageEntries = run.sessionEntries.filter((e) => e.type === "message");
    expect(messageEntries.length).toBeGreaterThanOrEqual(scenario.stats.mainRequests);
    console.log(`[harness] ${run.mainRequests.length} main requests in ${run.durationMs} ms`);
  }, 120_000);
});

describe("runner extras", () => {
  const dir = mkdtempSync(join(tmpdir(), "pi-ck-fixture-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("slash commands are handled without a model call and their notifications are captured", async () => {
    const ext = join(dir, "notify-probe.ts");
    writeFileSync(
      ext,
      `export default function (pi: any) {
        pi.registerCommand("probe-notify", { description: "probe", handler: async (args: string, ctx: any) => ctx.ui.notify("probe says " + args, "warning") });
      }\n`,
    );
    const run = await runPi({
      extension: false,
      args: ["-e", ext],
      prompts: [{ prompt: "/probe-notify hello", graceMs: 200 }, "and now a real prompt"],
      script: [{ thinking: "ok", text: "done" }],
    });
    expect(run.exitCode).toBe(0);
    expect(run.prompts[0].response?.data).toEqual({ disposition: "handled" });
    expect(run.prompts[0].requests).toHaveLength(0);
    expect(run.notifications).toContainEqual({ message: "probe says hello", notifyType: "warning" });
    expect(run.mainRequests).toHaveLength(1);
  }, 60_000);

  test("a context hook that strips the current loop's thinking is answered 400 (the server catches it)", async () => {
    const ext = join(dir, "strip-thinking.ts");
    writeFileSync(
      ext,
      `export default function (pi: any) {
        pi.on("context", (event: any) => ({
          messages: event.messages.map((m: any) => m.role === "assistant" ? { ...m, content: m.content.filter((b: any) => b.type !== "thinking") } : m),
        }));
      }\n`,
    );
    const run = await runPi({
      extension: false,
      args: ["-e", ext],
      prompts: ["go"],
      script: [{ thinking: "plan", toolCalls: [{ name: "bash", input: { command: "echo hi" } }] }, { thinking: "end", text: "done" }],
    });
    expect(run.mainRequests).toHaveLength(2);
    expect(run.mainRequests[0].status).toBe(200);
    expect(run.mainRequests[1].status).toBe(400);
    expect(run.mainRequests[1].errorMessage).toMatch(/Expected `thinking`/);
  }, 60_000);

  test("print mode, then resume with --continue on the same workspace and server", async () => {
    const server = startFakeAnthropic({
      script: [
        { thinking: "look", toolCalls: [{ name: "bash", input: { command: "echo first-run-output" } }] },
        { thinking: "done", text: "first answer" },
        { thinking: "again", text: "second answer" },
      ],
    });
    try {
      const first = await runPi({ server, extension: false, prompts: ["first prompt"], keepWorkspace: true });
      expect(first.exitCode).toBe(0);
      expect(first.stdout).toContain("first answer");
      expect(first.sessionFile).toBeDefined();
      const second = await runPi({ server, extension: false, resume: first.workspace, prompts: ["second prompt"] });
      expect(second.exitCode).toBe(0);
      expect(second.sessionFile).toBe(first.sessionFile);
      const resumed = second.mainRequests[0].body.messages;
      const texts = JSON.stringify(resumed);
      expect(texts).toContain("first prompt");
      expect(texts).toContain("first-run-output");
      expect(texts).toContain("second prompt");
      expect(server.rejected()).toHaveLength(0);
      first.workspace.cleanup();
    } finally {
      await server.stop();
    }
  }, 120_000);
});
