/**
 * Foundation acceptance on the wire: the real pi CLI with this extension loaded against the
 * fake Anthropic server.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { generateScenario } from "../support/scenario.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

/**
 * Everything in a request except what the extension deliberately adds from the first
 * request on: its tool (in the tool list) and that tool's one-line entry in the system prompt.
 */
const withoutDeliberateAdditions = (r: RecordedRequest) => JSON.stringify({ ...r.body, tools: undefined, system: undefined });

describe("the extension on the wire", () => {
  // A short session is enough: the properties are per request.
  const scenario = generateScenario({ seed: 7, prompts: 2, stepsPerPrompt: [5, 7], files: 6, fileBytes: [2048, 4096] });

  test("/keeper answers without any model request", async () => {
    const run = await runPi({ prompts: ["/keeper"], mode: "rpc", files: scenario.files });
    workspaces.push(run.workspace);
    expect(run.requests).toHaveLength(0);
    const text = run.notifications.map((n) => n.message).join("\n");
    expect(text).toContain("context-keeper: on");
    expect(text).toContain("settings: all defaults");
    expect(text).toContain("thinking strip:");
  }, 60_000);

  test("enabled: false is byte-identical to bare pi; enabled differs only by a constant tool list", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const common = { prompts: scenario.prompts, mode: "rpc" as const, workspace, serverOptions: { idNonce: "same" } };
    const bare = await runPi({ ...common, script: scenario.steps, extension: false });
    const disabled = await runPi({ ...common, script: scenario.steps, contextKeeper: { enabled: false } });
    const enabled = await runPi({ ...common, script: scenario.steps });

    expect(bare.mainRequests.length).toBe(scenario.stats.mainRequests);
    expect(disabled.requests.map((r) => r.raw)).toEqual(bare.requests.map((r) => r.raw));

    // Enabled: the same requests in number; the tool list and system prompt carry the recall
    // tool from the first request on and never change within the session.
    expect(enabled.mainRequests.length).toBe(bare.mainRequests.length);
    expect(enabled.requests.filter((r) => r.status !== 200).length).toBe(0);
    const heads = new Set(enabled.mainRequests.map((r) => JSON.stringify([r.body.tools, r.body.system])));
    expect(heads.size).toBe(1);
    const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t) => (t as { name: string }).name);
    expect(toolNames(enabled.mainRequests[0]!)).toEqual([...toolNames(bare.mainRequests[0]!), "keeper_recall"]);
    // The very first request (nothing to prune yet) equals bare pi's apart from those additions.
    expect(withoutDeliberateAdditions(enabled.mainRequests[0]!)).toBe(withoutDeliberateAdditions(bare.mainRequests[0]!));
  }, 120_000);

  test("a bad settings value gives one notification naming key and value, and pi keeps running", async () => {
    const run = await runPi({
      prompts: ["/keeper"],
      mode: "rpc",
      files: scenario.files,
      contextKeeper: { thinkingStrip: { mode: "sometimes" } },
    });
    workspaces.push(run.workspace);
    const warnings = run.notifications.filter((n) => n.message.includes("contextKeeper.thinkingStrip.mode"));
    // one at session start, and /keeper lists it again under "settings problems"
    expect(warnings.filter((n) => n.notifyType === "warning")).toHaveLength(1);
    expect(warnings[0]!.message).toContain('"sometimes"');
    // /keeper lists the problem, and the key is at its default, so it is not among the changed ones.
    const view = run.notifications.find((n) => n.message.startsWith("context-keeper: on"))!;
    expect(view.message).toContain("settings problems (defaults used for these keys):");
    expect(view.message).toContain("settings: all defaults");
  }, 60_000);
});
