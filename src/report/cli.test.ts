/**
 * The CLI as a user runs it: `node bin/pi-context-keeper.mjs report …` in a subprocess (Node
 * re-executes the TypeScript entry under the local bun).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syntheticSession } from "../../test/support/report/arms-fixtures.ts";

const ROOT = join(import.meta.dir, "../..");
const BIN = join(ROOT, "bin", "pi-context-keeper.mjs");
const SAMPLE = join(ROOT, "samples", "sample-session.jsonl");
const tmp = mkdtempSync(join(tmpdir(), "keeper-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cli(args: string[], options: { cwd?: string; agentDir?: string } = {}) {
  const cwd = options.cwd ?? tmp;
  const r = spawnSync("node", [BIN, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, PI_CODING_AGENT_DIR: options.agentDir ?? join(tmp, "no-agent-dir") },
    timeout: 600_000, // the whole sample with every arm takes minutes on a loaded machine
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function dir(name: string): string {
  const d = join(tmp, name);
  mkdirSync(d, { recursive: true });
  return d;
}

const ARM_FIELDS = ["billed_input", "billed_with_output", "hit_ratio", "busts", "peak_context_tokens"];

describe("report on the bundled sample (--json)", () => {
  const out = dir("out-sample");
  const r = cli(["report", SAMPLE, "--json", "--out", out]);
  const json = JSON.parse(r.stdout);

  test("exits 0 and prints exactly one JSON object on stdout", () => {
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(typeof json).toBe("object");
  });

  test("the documented fields exist and are numbers", () => {
    expect(json.sessions).toHaveLength(1);
    const s = json.sessions[0];
    expect(s.file).toBe(SAMPLE);
    expect(s.requests).toBeGreaterThan(100);
    expect(s.user_prompts).toBeGreaterThan(10);
    expect(s.calibration.total_error).toBeGreaterThanOrEqual(0);
    expect(s.calibration.total_error).toBeLessThan(0.1); // a fraction, not a percentage
    for (const name of ["bare", "keeper", "no-pruning", "thinking-off", "thinking-flush-gated", "no-chain-compression", "no-error-purge", "budget-trigger-off"]) {
      const arm = s.arms[name];
      expect(arm).toBeDefined();
      for (const f of [...ARM_FIELDS, "ratio_to_bare", "busts_per_prompt"]) expect(Number.isFinite(arm[f])).toBe(true);
      expect(arm.hit_ratio).toBeLessThanOrEqual(1);
    }
    expect(s.arms.bare.ratio_to_bare).toBe(1);
    expect(s.arms.keeper.ratio_to_bare).toBeLessThan(1);
    expect(json.total.arms.keeper.ratio_to_bare).toBeCloseTo(s.arms.keeper.ratio_to_bare, 12);
  });

  test("says the summaries come from the size model, and writes the chart into --out", () => {
    expect(json.summaries.source).toBe("size-model");
    expect(json.summaries.description).toContain("size model");
    expect(json.sessions[0].chart).toBe(join(out, "sample-session.svg"));
    expect(readFileSync(join(out, "sample-session.svg"), "utf8")).toContain("keeper: cache read");
  });

  test("progress goes to stderr as plain lines when stderr is not a terminal", () => {
    expect(r.stderr).toContain("progress: 100%");
    expect(r.stdout).not.toContain("progress");
  });
});

describe("tables, defaults and output location", () => {
  test("the table names every arm and the size model; nothing is written next to the session", () => {
    const sessions = dir("agent/sessions/--p--");
    const file = join(sessions, "2025_s.jsonl");
    writeFileSync(file, syntheticSession({ prompts: 4, callsPerPrompt: 2, outputChars: 6000 }));
    const cwd = dir("cwd-default");
    const r = cli(["report", "--arms", "no-pruning"], { cwd, agentDir: join(tmp, "agent") });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`newest Pi session: ${file}`);
    expect(r.stdout).toContain("size model");
    for (const arm of ["bare", "keeper", "no-pruning"]) expect(r.stdout).toMatch(new RegExp(`^${arm}\\s`, "m"));
    expect(readdirSync(sessions)).toEqual(["2025_s.jsonl"]);
    expect(readdirSync(join(cwd, "pi-context-keeper-report"))).toEqual(["2025_s.svg"]);
  }, 300_000);

  test("no session in the agent dir: the bundled sample is replayed", () => {
    const r = cli(["report", "--json", "--no-chart", "--arms", "keeper"], { agentDir: dir("empty-agent") });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("bundled sample");
    expect(JSON.parse(r.stdout).sessions[0].file).toBe(SAMPLE);
  }, 300_000);

  test("--out inside the sessions dir or beside an input is refused (exit 2), nothing written", () => {
    const agent = dir("agent2");
    const sessions = dir("agent2/sessions/--q--");
    const file = join(sessions, "s.jsonl");
    writeFileSync(file, syntheticSession({ prompts: 2, callsPerPrompt: 1, outputChars: 3000 }));
    const inside = cli(["report", file, "--out", join(agent, "sessions", "report")], { agentDir: agent });
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain("inside the Pi sessions dir");
    const other = dir("elsewhere");
    const input = join(other, "t.jsonl");
    writeFileSync(input, readFileSync(file));
    const beside = cli(["report", input, "--out", other]);
    expect(beside.code).toBe(2);
    expect(beside.stderr).toContain("is the directory of the session");
    expect(readdirSync(other)).toEqual(["t.jsonl"]);
    expect(existsSync(join(agent, "sessions", "report"))).toBe(false);
  }, 300_000);

  test("usage errors exit 2; --help exits 0 and lists the arms", () => {
    expect(cli(["report", "--arms", "warp-drive"]).code).toBe(2);
    expect(cli(["frobnicate"]).code).toBe(2);
    const help = cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("budget-trigger-off");
  }, 300_000);
});

describe("malformed input: the file and line are named, what can be replayed is", () => {
  const good = syntheticSession({ prompts: 3, callsPerPrompt: 1, outputChars: 3000 }).trimEnd().split("\n");
  const write = (name: string, text: string) => {
    const f = join(dir("bad"), name);
    writeFileSync(f, text);
    return f;
  };
  const run = (file: string) => {
    const r = cli(["report", file, "--json", "--no-chart", "--arms", "keeper"]);
    return { ...r, json: JSON.parse(r.stdout) };
  };

  test("a truncated last line", () => {
    const file = write("truncated.jsonl", [...good.slice(0, -1), good.at(-1)!.slice(0, 50)].join("\n"));
    const r = run(file);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${file}:${good.length}: not valid JSON (truncated last line?)`);
    // 3 prompts × 2 requests, the last final answer lost
    expect(r.json.sessions[0].requests).toBe(5);
  }, 300_000);

  test("an unknown entry type", () => {
    const lines = [...good];
    lines.splice(3, 0, JSON.stringify({ type: "hologram", id: "h", parentId: null }));
    const file = write("unknown.jsonl", lines.join("\n"));
    const r = run(file);
    expect(r.stderr).toContain(`${file}:4: unknown entry type "hologram"`);
    expect(r.json.sessions[0].diagnostics.some((d: { line: number }) => d.line === 4)).toBe(true);
  }, 300_000);

  test("an old session version", () => {
    // version 1: no ids, no parent links, no version field (Pi migrates it)
    const v1 = good.map((l, i) => {
      const e = JSON.parse(l);
      delete e.id;
      delete e.parentId;
      if (i === 0) delete e.version;
      return JSON.stringify(e);
    });
    const file = write("v1.jsonl", v1.join("\n"));
    const r = run(file);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${file}:1: session format version 1 (current is 3)`);
    expect(r.json.sessions[0].requests).toBe(6);
  }, 300_000);

  test("a file that is not JSONL: exit 1, lines named, reported with zeros", () => {
    const file = write("notes.md", "# Notes\n\nsome text\n");
    const r = run(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:1: not valid JSON; skipped`);
    expect(r.stderr).toContain(`${file}:3: not valid JSON`);
    expect(r.stderr).toContain("not a Pi session JSONL file?");
    expect(r.json.sessions[0].requests).toBe(0);
  }, 300_000);

  test("a missing file: one error line naming it, exit 2, nothing replayed", () => {
    const missing = join(tmp, "missing.jsonl");
    const ok = write("ok.jsonl", good.join("\n"));
    const r = cli(["report", missing, ok, "--json", "--no-chart", "--arms", "keeper"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`pi-context-keeper: cannot read ${missing}: no such file\n`);
    expect(r.stdout).toBe("");
  }, 60_000);

  test("--version through the bin prints the package.json version", () => {
    const r = cli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`pi-context-keeper ${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`);
  }, 60_000);
});
