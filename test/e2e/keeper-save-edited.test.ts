/**
 * A settings file edited while Pi runs, then `/keeper save`, through the real pi CLI. The files
 * are read at session start; the edit (here: `enabled: false` and a bad value) must not be
 * applied silently by an unrelated save. The save writes the session override into the file as
 * it is now (the edit stays in the file), says what changed in the files since the session read
 * them and that it takes effect at the next start, names the bad value, and the keeper stays on.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t) => t.name);

describe("/keeper save after the settings file was edited while Pi ran", () => {
  test("the edit is kept in the file, reported with its bad value, and not applied: the keeper stays on", async () => {
    const workspace = createPiWorkspace();
    workspaces.push(workspace);
    const settingsPath = join(workspace.agentDir, "settings.json");
    const editFile = () => {
      const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
      settings.contextKeeper = { ...settings.contextKeeper, enabled: false, thinkingStrip: { mode: "sometimes" } };
      writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
    };
    const run = await runPi({
      workspace,
      mode: "rpc",
      contextKeeper: { summarizer: { mode: "extractive" } },
      script: [{ text: "Hello." }],
      prompts: ["/keeper set pruning.minBatchChars 3000", { run: editFile }, "/keeper save", "/keeper", "hello"],
    });
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    const messages = run.notifications.map((n) => n.message);
    const saved = run.notifications.find((n) => n.message.includes(`saved to ${settingsPath}`))!;
    expect(saved).toBeDefined();
    console.log(`[keeper-save-edited]\n${saved.message}`);
    expect(saved.notifyType).toBe("warning");
    // What changed in the files since the session read them, with the value in effect now.
    expect(saved.message).toContain("changed since this session read");
    expect(saved.message).toMatch(/enabled = false .*\(this session: true\)/);
    expect(saved.message).toContain("next start");
    // The bad value that came with the edit, named.
    expect(saved.message).toContain('contextKeeper.thinkingStrip.mode = "sometimes"');

    // The file holds the save and the edit.
    const file = JSON.parse(readFileSync(settingsPath, "utf8"));
    expect(file.contextKeeper).toEqual({ summarizer: { mode: "extractive" }, enabled: false, thinkingStrip: { mode: "sometimes" }, pruning: { minBatchChars: 3000 } });

    // The keeper is still on: /keeper says so, and the request carries its tool.
    expect(messages.some((m) => m.startsWith("context-keeper: on"))).toBe(true);
    expect(messages.some((m) => m.startsWith("context-keeper: off"))).toBe(false);
    expect(run.mainRequests).toHaveLength(1);
    expect(toolNames(run.mainRequests[0]!)).toContain("keeper_recall");
  }, 90_000);

  test("with no edit in between, the save is as before: the saved key comes from the file", async () => {
    const run = await runPi({
      mode: "rpc",
      keepWorkspace: true,
      prompts: ["/keeper set pruning.minBatchChars 3000", "/keeper save", "/keeper"],
    });
    workspaces.push(run.workspace);
    const saved = run.notifications.find((n) => n.message.includes("saved to"))!;
    expect(saved.notifyType).toBe("info");
    expect(saved.message).not.toContain("changed since");
    const view = run.notifications.filter((n) => n.message.startsWith("context-keeper: on")).at(-1)!;
    expect(view.message).toMatch(/ {3}pruning\.minBatchChars = 3000 +from .*settings\.json/);
  }, 90_000);
});
