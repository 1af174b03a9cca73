/**
 * Two copies of the package in one Pi, from two folders: a copy configured as a package in the
 * agent's settings (what `pi install <dir>` writes) and this clone passed with `-e` (what
 * `npm run pi` does). Pi loads both; before the keeper claimed its copy, both registered
 * `keeper_recall` and Pi refused to start ("Tool "keeper_recall" conflicts with …"). Now Pi
 * starts, the clone (loaded first: Pi loads `-e` paths before configured packages) runs, the
 * installed copy registers nothing, and the running copy says once which copy runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, realpathSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";
import type { RecordedRequest } from "../support/fake-anthropic/index.ts";
import { startFakeAnthropic } from "../support/fake-anthropic/server.ts";
import { createPiWorkspace, REPO_ROOT, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { writeAgentConfig } from "../support/scenario-workspace.ts";
import { hasTmux, startTmuxPi, type TmuxPi } from "../support/tmux-pi.ts";

/** Pi's built-in extensions, off so that only the two copies add anything. */
const NO_BUILTINS = ["-builtin:mcp", "-builtin:codemode", "-builtin:tool-search", "-builtin:llama.cpp"];

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

let other: string;
beforeAll(() => {
  const holder = createPiWorkspace();
  workspaces.push(holder);
  // The second copy: what the package ships (index.ts, core.ts, src/ without tests, package.json), elsewhere.
  other = join(holder.root, "installed", "pi-context-keeper");
  mkdirSync(other, { recursive: true });
  for (const f of ["index.ts", "core.ts", "package.json"]) cpSync(join(REPO_ROOT, f), join(other, f));
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) {
        const to = join(other, relative(REPO_ROOT, p));
        mkdirSync(join(to, ".."), { recursive: true });
        cpSync(p, to);
      }
    }
  };
  walk(join(REPO_ROOT, "src"));
  // Its dependency (zod) from this clone's install, as npm would have put it beside the package.
  symlinkSync(join(REPO_ROOT, "node_modules"), join(other, "node_modules"));
});

const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t) => t.name);

describe("an installed copy and a clone loaded with -e", () => {
  test("rpc: Pi starts, one copy registers (one tool, one /keeper), and says once which copy runs", async () => {
    const run = await runPi({
      mode: "rpc",
      discoverExtensions: true,
      settings: { packages: [other], extensions: NO_BUILTINS },
      script: [{ text: "Hello." }],
      prompts: [{ command: { type: "get_commands" } }, "/keeper", "hello"],
    });
    workspaces.push(run.workspace);
    expect(run.stderr).not.toContain("conflicts with");
    expect(run.mainRequests).toHaveLength(1);
    expect(toolNames(run.mainRequests[0]!).filter((n) => n === "keeper_recall")).toHaveLength(1);

    const commands = (run.responses.find((r) => r.command === "get_commands")?.data as { commands: Array<{ name: string; sourceInfo?: { path?: string } }> }).commands;
    const keeperCommands = commands.filter((c) => c.name.startsWith("keeper") || c.name.startsWith("async-compact-now"));
    expect(keeperCommands.map((c) => c.name).sort()).toEqual(["async-compact-now", "keeper"]);
    for (const c of keeperCommands) expect(realpathSync(c.sourceInfo!.path!)).toBe(realpathSync(join(REPO_ROOT, "index.ts")));

    const said = run.notifications.filter((n) => n.message.includes("copies of pi-context-keeper"));
    expect(said).toHaveLength(1);
    expect(said[0]!.notifyType).toBe("warning");
    expect(said[0]!.message).toContain(`runs: ${realpathSync(REPO_ROOT)}`);
    expect(said[0]!.message).toContain(realpathSync(other));
    expect(run.notifications.some((n) => n.message.startsWith("context-keeper: on"))).toBe(true);
  }, 120_000);

  test("print mode: Pi starts and answers; the notice is on stderr once", async () => {
    const run = await runPi({
      discoverExtensions: true,
      settings: { packages: [other], extensions: NO_BUILTINS },
      script: [{ text: "Hello from print mode." }],
      prompts: ["hello"],
    });
    workspaces.push(run.workspace);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("Hello from print mode.");
    expect(run.stderr).not.toContain("conflicts with");
    expect(run.stderr.split("copies of pi-context-keeper").length - 1).toBe(1);
  }, 120_000);

  // The interactive TUI, in a real terminal: Pi used to exit before drawing anything.
  test.skipIf(!hasTmux)("interactive (tmux): Pi starts, says once which copy runs, and answers", async () => {
    const server = startFakeAnthropic({ script: [{ text: "Hello from the terminal." }] });
    const workspace = createPiWorkspace();
    workspaces.push(workspace);
    let pi: TmuxPi | undefined;
    try {
      writeAgentConfig(workspace, { baseUrl: server.baseUrl, settings: { packages: [other], extensions: NO_BUILTINS } });
      pi = startTmuxPi({ session: `two-copies-e2e-${process.pid}`, workspace, label: "two-copies", discoverExtensions: true });
      const started = await pi.waitForScreen((s) => s.includes("keeper:") && s.includes("copies of pi-context-keeper"), "the status line and the copies notice", 60_000);
      expect(started).not.toContain("conflicts with");
      expect(started.split("copies of pi-context-keeper").length - 1).toBe(1);
      pi.typeText("hello");
      pi.press("Enter");
      await pi.waitForScreen((s) => s.includes("Hello from the terminal."), "the answer", 60_000);
      expect(server.requests.filter((r) => r.kind === "main")).toHaveLength(1);
    } finally {
      pi?.kill();
      await server.stop();
    }
  }, 120_000);
});
