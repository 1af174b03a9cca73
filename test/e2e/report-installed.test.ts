/**
 * The report outside the clone, as a user runs it before the package is published: `npm pack`
 * in the clone, then in a scratch folder far from it
 * - `npm i -g <tarball>` (into a scratch prefix): npm installs Pi beside it as a peer
 *   dependency, and `pi-context-keeper report` runs through Pi's TypeScript loader (no bun);
 * - `npx -p <tarball> pi-context-keeper …`, without installing.
 * The installed command reads the user's sessions folder (`PI_CODING_AGENT_DIR`), prices with
 * pi-ai's registry, and prints the very figures the clone's report gives for the same files.
 * npm is pointed at the machine's npm cache and prefers it (what `npm ci` left there).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { probeFileSystem } from "../../src/report/cli/file-probe.ts";
import type { AllReportOutput } from "../../src/report/cli/run-all.ts";
import { runReportCli, type ReportOutput } from "../../src/report/cli/run-report.ts";
import { piRuntime, REPO_ROOT } from "../support/pi-runner.ts";
import { generateProviderSession, SONNET45 } from "../support/report/provider-session.ts";
import { syntheticSession } from "../support/report/arms-fixtures.ts";

const PKG = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { name: string; version: string };
const runtime = piRuntime();
const haveNode = runtime.kind === "node";
if (!haveNode) console.error("[report-installed] no Node >= 22.19: the installed report is not checked");

let root = "";
let tarball = "";
/** The user's sessions: a realistic coding session priced from the registry, and a short one. */
let sessions = "";
beforeAll(() => {
  if (!haveNode) return;
  root = mkdtempSync(join(tmpdir(), "keeper-installed-"));
  sessions = join(root, "agent", "sessions", "--home-user-project--");
  mkdirSync(sessions, { recursive: true });
  mkdirSync(join(root, "home"), { recursive: true });
  writeFileSync(join(sessions, "coding.jsonl"), generateProviderSession({ seed: 3, models: [SONNET45], prompts: 4, dir: mkdtempSync(join(root, "gen-")) }).text);
  writeFileSync(join(sessions, "short.jsonl"), syntheticSession({ prompts: 2, callsPerPrompt: 3, outputChars: 3000 }));
  const packed = spawnSync("npm", ["pack", "--json", "--pack-destination", root], { cwd: REPO_ROOT, encoding: "utf8", timeout: 120_000 });
  expect(packed.status).toBe(0);
  tarball = join(root, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
}, 180_000);
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A user's environment: Node >= 22.19 first on PATH, nothing of the clone, npm offline-first on the machine's cache. */
function userEnv(): Record<string, string> {
  const cache = spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).stdout.trim();
  return {
    PATH: `${dirname(runtime.command)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: join(root, "home"),
    PI_CODING_AGENT_DIR: join(root, "agent"),
    npm_config_cache: cache,
    npm_config_prefer_offline: "true",
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    // A registry request that stalls is given up after 60 s and retried, instead of holding the
    // install for npm's default 5 minutes (seen once in a full run on a loaded machine).
    npm_config_fetch_timeout: "60000",
    npm_config_fetch_retries: "4",
    npm_config_fetch_retry_maxtimeout: "20000",
  };
}

function inClone(argv: string[], sessionsDir: string): string {
  let out = "";
  runReportCli(argv, { stdout: (t) => (out += t), stderr: () => {}, stderrIsTTY: false, cwd: root, sessionsDir, mkdir: () => {}, writeFile: () => {}, now: () => 0, probeFile: probeFileSystem, version: PKG.version });
  return out;
}

describe.skipIf(!haveNode)("the report outside the clone", () => {
  test("npm i -g <tarball>: report and report --all run in a scratch folder with the clone's figures", () => {
    const env = userEnv();
    const one = join(sessions, "coding.jsonl");

    const prefix = join(root, "global");
    const install = spawnSync("npm", ["install", "-g", "--prefix", prefix, tarball], { cwd: root, env, encoding: "utf8", timeout: 300_000 });
    if (install.status !== 0) console.error(`[report-installed] npm install -g: status ${install.status}, signal ${install.signal}\n${install.stderr.slice(-3000)}`);
    expect(install.status).toBe(0);
    const bin = join(prefix, "bin", "pi-context-keeper");
    const cli = (...args: string[]) => spawnSync(bin, args, { cwd: env.HOME, env, encoding: "utf8", timeout: 300_000 });

    expect(cli("--version").stdout).toBe(`pi-context-keeper ${PKG.version}\n`);
    const single = cli("report", one, "--json", "--no-chart", "--arms", "keeper");
    expect(single.status).toBe(0);
    const installed = (JSON.parse(single.stdout) as ReportOutput).sessions[0]!;
    const clone = (JSON.parse(inClone(["report", one, "--json", "--no-chart", "--arms", "keeper"], join(root, "none"))) as ReportOutput).sessions[0]!;
    expect(installed.models[0]!.price_source).toBe("pi-ai registry");
    expect(installed.money).toEqual(clone.money);
    expect(installed.calibration).toEqual(clone.calibration);

    const all = cli("report", "--all", "--json");
    expect(all.status).toBe(0);
    const out = JSON.parse(all.stdout) as AllReportOutput;
    expect(out.sessions_dir).toBe(join(env.PI_CODING_AGENT_DIR!, "sessions"));
    expect(out.sessions.map((s) => s.file).sort()).toEqual(["--home-user-project--/coding.jsonl", "--home-user-project--/short.jsonl"]);
    const coded = out.sessions.find((s) => s.file.endsWith("coding.jsonl"))!;
    expect(coded.paid_usd).toBeCloseTo(clone.money.paid_usd, 12);
    expect(out.total.paid_usd).toBeCloseTo(out.sessions.reduce((n, s) => n + s.paid_usd, 0), 12);
    const text = cli("report", "--all", "--since", "3650d");
    expect(text.stdout).toContain("last 3650 days: 2 sessions");
  }, 600_000);

  test("npx -p <tarball> pi-context-keeper runs it without installing", () => {
    const env = userEnv();
    const r = spawnSync("npx", ["--yes", "-p", tarball, "pi-context-keeper", "report", "--all", "--json"], { cwd: env.HOME, env, encoding: "utf8", timeout: 300_000 });
    if (r.status !== 0) console.error(`[report-installed] npx: status ${r.status}, signal ${r.signal}\n${r.stderr.slice(-3000)}`);
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as AllReportOutput).sessions.length).toBe(2);
  }, 600_000);
});
