/**
 * The keeper off on a resumed keeper session, through the real pi CLI: Pi 1.6 restores the tool
 * loadout the session recorded (`keeper_recall` among it), so the keeper itself must take its
 * tool back out. With `enabled: false` in the settings the resumed session's request is
 * byte-identical to bare Pi's on the same session (doc/settings.md's promise); `/keeper off` on
 * a resumed session takes the tool and its system-prompt line out from the next request, and
 * `/keeper on` puts them back.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t) => t.name);
const systemText = (r: RecordedRequest) => JSON.stringify(r.body.system ?? "");
const KEEPER = { summarizer: { mode: "extractive" } };

/** A keeper session whose recorded loadout holds `keeper_recall` (one prompt, answered). */
async function keeperSession(): Promise<PiWorkspace> {
  const workspace = createPiWorkspace({ "notes.txt": "a note\n" });
  workspaces.push(workspace);
  const first = await runPi({ workspace, mode: "rpc", contextKeeper: KEEPER, serverOptions: { idNonce: "same" }, script: [{ text: "first answer" }], prompts: ["first"] });
  expect(toolNames(first.mainRequests[0]!)).toContain("keeper_recall");
  return workspace;
}

describe("the keeper off on a resumed keeper session", () => {
  test("enabled: false: the request is byte-identical to bare Pi resuming the same session (no keeper_recall in tools or system prompt)", async () => {
    const workspace = await keeperSession();
    const sessions = join(workspace.agentDir, "sessions");
    const saved = join(workspace.root, "sessions-saved");
    cpSync(sessions, saved, { recursive: true });
    const common = { resume: workspace, mode: "rpc" as const, serverOptions: { idNonce: "same" }, script: [{ text: "second answer" }], prompts: ["second"] };
    const disabled = await runPi({ ...common, contextKeeper: { ...KEEPER, enabled: false } });
    rmSync(sessions, { recursive: true, force: true });
    cpSync(saved, sessions, { recursive: true });
    const bare = await runPi({ ...common, extension: false });

    expect(disabled.mainRequests).toHaveLength(1);
    expect(bare.mainRequests).toHaveLength(1);
    expect(toolNames(disabled.mainRequests[0]!)).not.toContain("keeper_recall");
    expect(systemText(disabled.mainRequests[0]!)).not.toContain("keeper_recall");
    expect(disabled.mainRequests.map((r) => r.raw)).toEqual(bare.mainRequests.map((r) => r.raw));
  }, 180_000);

  test("/keeper off on a resumed session takes keeper_recall out of the next request; /keeper on puts it back", async () => {
    const workspace = await keeperSession();
    const run = await runPi({
      resume: workspace,
      mode: "rpc",
      contextKeeper: KEEPER,
      serverOptions: { idNonce: "same" },
      script: [{ text: "on" }, { text: "off" }, { text: "on again" }],
      prompts: ["resumed", "/keeper off", "while off", "/keeper on", "on again"],
    });
    expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    expect(run.mainRequests).toHaveLength(3);
    const [on, off, onAgain] = run.mainRequests as [RecordedRequest, RecordedRequest, RecordedRequest];
    expect(toolNames(on)).toContain("keeper_recall");
    expect(systemText(on)).toContain("keeper_recall");
    expect(toolNames(off)).not.toContain("keeper_recall");
    expect(systemText(off)).not.toContain("keeper_recall");
    expect(toolNames(off)).toEqual(toolNames(on).filter((n) => n !== "keeper_recall"));
    expect(toolNames(onAgain)).toEqual(toolNames(on));
    expect(systemText(onAgain)).toBe(systemText(on));
  }, 180_000);
});
