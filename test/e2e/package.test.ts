/**
 * The package as a user gets it: `npm pack` of this repo, installed into a scratch Pi agent dir
 * with Pi's own `pi install npm:<name>@file:<tarball>` (npm's spec for a named package from a
 * tarball; Pi runs `npm install --legacy-peer-deps` into `<agent dir>/npm`, so the host packages
 * come from pi itself). Then pi starts with nothing but its configured packages and the
 * installed copy answers `/keeper` and adds its tool on the wire; in a real terminal (tmux, when
 * installed) Pi lists the extension by the package's name and `/keeper` prints its settings.
 * No network is needed: npm is pointed at the machine's npm cache (where `npm ci` left zod) and
 * prefers it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPiWorkspace, PI_CLI, piRuntime, REPO_ROOT, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { childEnv, writeAgentConfig } from "../support/scenario-workspace.ts";
import { syntheticSession } from "../support/report/arms-fixtures.ts";

const PKG = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { name: string; version: string };
/** Pi's built-in extensions, off so that only the installed package adds anything. */
const NO_BUILTINS = ["-builtin:mcp", "-builtin:codemode", "-builtin:tool-search", "-builtin:llama.cpp"];

let ws: PiWorkspace;
let tarball: string;
let packedFiles: string[] = [];
afterAll(() => ws?.cleanup(), 120_000);

function npmCache(): string {
  const r = spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" });
  return r.stdout.trim();
}

function pi(args: string[]) {
  const env = childEnv(ws, { npm_config_cache: npmCache(), npm_config_prefer_offline: "true", npm_config_update_notifier: "false" });
  return spawnSync(piRuntime().command, [PI_CLI, ...args], { cwd: ws.cwd, env, encoding: "utf8", timeout: 120_000 });
}

beforeAll(() => {
  ws = createPiWorkspace();
  const packed = spawnSync("npm", ["pack", "--json", "--pack-destination", ws.root], { cwd: REPO_ROOT, encoding: "utf8", timeout: 120_000 });
  expect(packed.status).toBe(0);
  const info = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(ws.root, info[0]!.filename);
  packedFiles = info[0]!.files.map((f) => f.path);
}, 180_000);

describe("the packed package", () => {
  test("carries what Pi loads and the report CLI needs, and no tests, fixtures, corpus or bench", () => {
    for (const f of ["package.json", "index.ts", "LICENSE", "CHANGELOG.md", "README.md", "bin/pi-context-keeper.mjs", "samples/sample-session.jsonl", "src/report/cli/main.ts", "core.ts", "src/compaction/core.ts"]) {
      expect(packedFiles).toContain(f);
    }
    expect(packedFiles.filter((f) => /\.test\.ts$|^test\/|^corpus\/|^bench\/|^scripts\/|^\.ci\//.test(f))).toEqual([]);
    // Every module the extension or the CLI imports is in the tarball: all non-test sources.
    expect(packedFiles.filter((f) => f.startsWith("src/")).every((f) => f.endsWith(".ts"))).toBe(true);
    // Exactly the sources git tracks (no stray build output or editor files), not a count that breaks with each new module.
    const tracked = spawnSync("git", ["ls-files", "src"], { cwd: REPO_ROOT, encoding: "utf8" }).stdout.split("\n").filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    expect(packedFiles.filter((f) => f.startsWith("src/")).sort()).toEqual(tracked.sort());
  });

  test("pi install puts it under the agent dir by its name, and pi list shows it", () => {
    const spec = `npm:${PKG.name}@file:${tarball}`;
    const install = pi(["install", spec]);
    expect(install.stderr + install.stdout).toContain(`Installed ${spec}`);
    expect(install.status).toBe(0);
    const installed = join(ws.agentDir, "npm", "node_modules", PKG.name);
    expect(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version).toBe(PKG.version);
    // its own dependency came along; the host packages did not (pi supplies them)
    expect(existsSync(join(ws.agentDir, "npm", "node_modules", "zod"))).toBe(true);
    expect(existsSync(join(ws.agentDir, "npm", "node_modules", "@earendil-works"))).toBe(false);
    const settings = JSON.parse(readFileSync(join(ws.agentDir, "settings.json"), "utf8")) as { packages?: unknown[] };
    expect(settings.packages).toEqual([spec]);
    const list = pi(["list"]);
    expect(list.status).toBe(0);
    expect(list.stdout).toContain(spec);
    expect(list.stdout).toContain(realpathSync(installed));
  }, 180_000);

  test("pi loads the installed copy: /keeper answers and the recall tool is on the wire", async () => {
    const settings = JSON.parse(readFileSync(join(ws.agentDir, "settings.json"), "utf8")) as { packages: unknown[] };
    expect(settings.packages.length).toBe(1);
    const run = await runPi({
      workspace: ws,
      extension: false,
      discoverExtensions: true,
      settings: { packages: settings.packages, extensions: NO_BUILTINS },
      script: [{ text: "Hello from the fake model." }],
      prompts: ["/keeper", "hello"],
      mode: "rpc",
    });
    const text = run.notifications.map((n) => n.message).join("\n");
    expect(text).toContain("context-keeper: on");
    expect(run.prompts[0]!.response?.success).toBe(true);
    expect(run.mainRequests.length).toBe(1);
    const tools = (run.mainRequests[0]!.body.tools ?? []).map((t) => (t as { name: string }).name);
    expect(tools).toContain("keeper_recall");
    expect(run.stderr).not.toMatch(/Failed to load extension|Cannot find module/);
  }, 120_000);
});

test("the report CLI of the unpacked package runs without bun, through Pi's jiti, under Node >= 22.19", () => {
  const runtime = piRuntime();
  if (runtime.kind !== "node") {
    console.error("[package.test] no Node >= 22.19: the report CLI check is skipped");
    return;
  }
  // As `npx -p pi-context-keeper -p @earendil-works/pi-coding-agent` lays it out: the package,
  // its dependency, and Pi with its own dependencies (here: links into this clone's install).
  const modules = join(ws.root, "cli-user", "node_modules");
  const pkgDir = join(modules, PKG.name);
  mkdirSync(pkgDir, { recursive: true });
  expect(spawnSync("tar", ["xzf", tarball, "-C", pkgDir, "--strip-components=1"]).status).toBe(0);
  for (const dep of ["@earendil-works", "zod", "typebox"]) symlinkSync(join(REPO_ROOT, "node_modules", dep), join(modules, dep));
  expect(existsSync(join(pkgDir, "node_modules"))).toBe(false);
  const session = join(ws.root, "cli-user", "s.jsonl");
  writeFileSync(session, syntheticSession({ prompts: 2, callsPerPrompt: 2, outputChars: 4000 }));
  const bin = join(pkgDir, "bin", "pi-context-keeper.mjs");
  const env = { ...childEnv(ws), PATH: "/usr/bin:/bin" };
  const cli = (...args: string[]) => spawnSync(runtime.command, [bin, ...args], { cwd: join(ws.root, "cli-user"), env, encoding: "utf8", timeout: 300_000 });
  const version = cli("--version");
  expect(version.stdout).toBe(`pi-context-keeper ${PKG.version}\n`);
  const missing = cli("report", "nope.jsonl");
  expect(missing.status).toBe(2);
  expect(missing.stderr).toContain("cannot read");
  const report = cli("report", session, "--arms", "keeper", "--json", "--no-chart");
  expect(report.status).toBe(0);
  expect(JSON.parse(report.stdout).sessions[0].requests).toBeGreaterThan(0);
}, 600_000);

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
if (!hasTmux) console.error("[package.test] tmux not found: the terminal check is skipped");

describe.skipIf(!hasTmux)("the installed package in a real terminal", () => {
  // A socket inside the workspace, so nothing is left in tmux's shared directory.
  const tmux = (...args: string[]) => spawnSync("tmux", ["-S", join(ws.root, "tmux.sock"), ...args], { encoding: "utf8" });
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "pi").stdout;
  async function waitScreen(pred: (s: string) => boolean, ms: number): Promise<string> {
    const until = Date.now() + ms;
    let s = screen();
    while (!pred(s) && Date.now() < until) {
      await Bun.sleep(250);
      s = screen();
    }
    return s;
  }
  afterAll(() => void tmux("kill-server"), 60_000);

  test("Pi lists the extension by the package name, and /keeper prints its settings", async () => {
    const settings = JSON.parse(readFileSync(join(ws.agentDir, "settings.json"), "utf8")) as { packages: unknown[] };
    // An interactive start with its resource listing (quietStartup off); no model request is made.
    writeAgentConfig(ws, { baseUrl: "http://127.0.0.1:9", settings: { packages: settings.packages, extensions: NO_BUILTINS, quietStartup: false } });
    const env = childEnv(ws);
    const script = join(ws.root, "start-pi.sh");
    const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
    const exports = Object.entries(env).filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)).map(([k, v]) => `export ${k}=${quote(v)}`);
    writeFileSync(script, `${exports.join("\n")}\ncd ${quote(ws.cwd)}\nexec ${quote(piRuntime().command)} ${quote(PI_CLI)} --no-context-files --no-skills --no-prompt-templates\n`);
    expect(tmux("new-session", "-d", "-s", "pi", "-x", "160", "-y", "60", `sh ${quote(script)}`).status).toBe(0);
    const start = await waitScreen((s) => s.includes("[Extensions]") && s.includes("/200k"), 90_000);
    const lines = start.split("\n");
    const at = lines.findIndex((l) => l.trim() === "[Extensions]");
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]!.trim().startsWith(`${PKG.name}@`)).toBe(true);
    tmux("send-keys", "-t", "pi", "-l", "/keeper");
    await Bun.sleep(500);
    tmux("send-keys", "-t", "pi", "Enter");
    // The whole /keeper text: a bounded wait on its last line, not on the screen standing still
    // (a loaded machine can pause a render longer than any fixed quiet time).
    const after = await waitScreen((s) => s.includes("context-keeper: on") && s.includes("settings from:"), 60_000);
    expect(after).toContain("context-keeper: on");
    expect(after).toContain("settings from:");
  }, 150_000);
});
