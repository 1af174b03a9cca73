/**
 * `report --all [--since]` in-process over a sessions folder in a temp dir: one row per
 * session, the total, skipped files counted and named (never fatal), the window, and the
 * errors a user can meet (a bad --since, an empty or missing folder).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syntheticSession } from "../../../test/support/report/arms-fixtures.ts";
import { probeFileSystem } from "./file-probe.ts";
import type { AllReportOutput } from "./run-all.ts";
import { runReportCli, type CliIo, type ReportOutput } from "./run-report.ts";

const tmp = mkdtempSync(join(tmpdir(), "keeper-report-all-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const T0 = Date.parse("2025-11-20T10:00:00Z");
const DAY = 86_400_000;
/** Each synthetic request is billed 10 uncached + 1,000 read + 500 written + 20 output tokens, at Sonnet's price. */
const PER_REQUEST_USD = (10 * 3 + 1000 * 0.3 + 500 * 3.75 + 20 * 15) / 1e6;
const KEEPER_ENTRY = JSON.stringify({ type: "custom", customType: "context-keeper/flush", id: "k1", parentId: null, timestamp: "2025-11-20T10:00:00Z", data: { version: 2, summaries: [] } });

function sessionsFolder(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name, "sessions");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

function run(argv: string[], sessionsDir: string, o: { unreadable?: string[]; mtimes?: Record<string, number> } = {}) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stderrIsTTY: false,
    cwd: tmp,
    sessionsDir,
    mkdir: () => {},
    writeFile: () => {},
    now: () => 0,
    clock: () => T0 + 30 * DAY,
    probeFile: (p) => (o.unreadable?.some((u) => p.endsWith(u)) ? { ok: false, code: "EACCES" } : probeFileSystem(p)),
    version: "0.0.0-test",
    ...(o.mtimes
      ? {
          listSessions: (dir: string) => ({
            exists: true,
            files: Object.entries(o.mtimes!).map(([path, mtimeMs]) => ({ path: join(dir, path), mtimeMs })),
          }),
        }
      : {}),
  };
  const code = runReportCli(argv, io);
  return { code, stdout, stderr };
}

describe("report --all", () => {
  const bare = syntheticSession({ prompts: 4, callsPerPrompt: 3, outputChars: 4000, start: T0 });
  const keeper = syntheticSession({ prompts: 3, callsPerPrompt: 2, outputChars: 4000, start: T0 + 2 * DAY }).replace("\n", `\n${KEEPER_ENTRY}\n`);
  const late = syntheticSession({ prompts: 2, callsPerPrompt: 2, outputChars: 4000, start: T0 + 20 * DAY });
  const dir = sessionsFolder("mixed", {
    "--p1--/a.jsonl": bare,
    "--p2--/b.jsonl": keeper,
    "--p2--/c.jsonl": late,
    "--p2--/notes.jsonl": "# not a session\n",
    "--p1--/locked.jsonl": bare,
  });
  const all = run(["report", "--all", "--json"], dir, { unreadable: ["locked.jsonl"] });
  const out = JSON.parse(all.stdout) as AllReportOutput;

  test("one row per session, skipped files counted and named, exit 0", () => {
    expect(all.code).toBe(0);
    expect(out.sessions.map((s) => s.file).sort()).toEqual(["--p1--/a.jsonl", "--p2--/b.jsonl", "--p2--/c.jsonl"]);
    expect(out.skipped).toMatchObject({ unreadable: [{ file: "--p1--/locked.jsonl", reason: "permission denied" }], empty: ["--p2--/notes.jsonl"], failed: [], outside_window: 0 });
    expect(all.stderr).toContain("skipped 1 unreadable file: --p1--/locked.jsonl (permission denied)");
    expect(all.stderr).toContain("skipped 1 file with no billed request: --p2--/notes.jsonl");
    expect(all.stderr).toMatch(/progress: 100%/);
    expect(out.arms).toEqual(["bare", "keeper"]);
  });

  test("paid two ways: the row's dollars = the recorded usage at Sonnet's price, and = the single-session report's", () => {
    const a = out.sessions.find((s) => s.file === "--p1--/a.jsonl")!;
    expect(a.requests).toBe(4 * 4);
    expect(a.paid_usd).toBeCloseTo(16 * PER_REQUEST_USD, 12);
    const single = JSON.parse(run(["report", join(dir, "--p1--/a.jsonl"), "--json", "--no-chart", "--arms", "keeper"], dir).stdout) as ReportOutput;
    expect(a.paid_usd).toBeCloseTo(single.sessions[0]!.money.paid_usd, 12);
    expect(a.counterfactual_usd).toBeCloseTo(single.sessions[0]!.money.keeper_usd!, 12);
  });

  test("a session with the keeper's entries is reported as recorded with it: bare Pi is its counterfactual", () => {
    const b = out.sessions.find((s) => s.file === "--p2--/b.jsonl")!;
    expect(b.recorded_with).toBe("keeper");
    const single = JSON.parse(run(["report", join(dir, "--p2--/b.jsonl"), "--json", "--no-chart", "--arms", "keeper"], dir).stdout) as ReportOutput;
    expect(b.counterfactual_usd).toBeCloseTo(single.sessions[0]!.money.bare_usd, 12);
    expect(b.saved_usd).toBeCloseTo(b.counterfactual_usd - b.paid_usd, 12);
  });

  test("the total is the sum of the rows, by how each session was recorded; the text says it in dollars", () => {
    const t = out.total;
    const sum = (f: (r: (typeof out.sessions)[number]) => number, w?: string) => out.sessions.filter((r) => !w || r.recorded_with === w).reduce((n, r) => n + f(r), 0);
    expect(t.sessions).toBe(3);
    expect(t.paid_usd).toBeCloseTo(sum((r) => r.paid_usd), 12);
    expect(t.recorded_with_keeper.sessions).toBe(1);
    expect(t.recorded_with_keeper.counterfactual_usd).toBeCloseTo(sum((r) => r.counterfactual_usd, "keeper"), 12);
    expect(t.recorded_without.counterfactual_usd).toBeCloseTo(sum((r) => r.counterfactual_usd, "bare"), 12);
    const text = run(["report", "--all"], dir, { unreadable: ["locked.jsonl"] }).stdout;
    expect(text).toContain(`all sessions: 3 sessions, ${t.requests} requests, $${t.paid_usd.toFixed(2)} paid`);
    expect(text).toContain(`recorded with the keeper (1 session): $${t.recorded_with_keeper.paid_usd.toFixed(2)} paid, ≈ $${t.recorded_with_keeper.counterfactual_usd.toFixed(2)} without the keeper`);
    expect(text).toContain(`recorded without it (2 sessions): $${t.recorded_without.paid_usd.toFixed(2)} paid, ≈ $${t.recorded_without.counterfactual_usd.toFixed(2)} with the keeper`);
    expect(text).toMatch(/^--p1--\/a\.jsonl\s+2025-11-20 \d\d:\d\d\s+16\s+without\s+\$0\.04/m);
  });

  test("--since: files last written before it are not opened; requests before it do not count", () => {
    // The clock stands at T0 + 30 days: 15 days back is after a and b (days 0 and 2), before c (day 20).
    const r = run(["report", "--all", "--since", "15d", "--json"], dir, { mtimes: { "--p1--/a.jsonl": T0 + DAY, "--p2--/b.jsonl": T0 + 3 * DAY, "--p2--/c.jsonl": T0 + 21 * DAY } });
    const o = JSON.parse(r.stdout) as AllReportOutput;
    expect(o.window).toBe("last 15 days");
    expect(o.sessions.map((s) => s.file)).toEqual(["--p2--/c.jsonl"]);
    expect(o.skipped.outside_window).toBe(2);
    // A session that straddles the start counts only its later requests (c's first request is at T0 + 20 d + 11 s).
    const cut = T0 + 20 * DAY + 60_000;
    const straddling = run(["report", "--all", "--since", new Date(cut).toISOString(), "--json"], dir, { mtimes: { "--p2--/c.jsonl": T0 + 21 * DAY } });
    const row = (JSON.parse(straddling.stdout) as AllReportOutput).sessions[0]!;
    const times = [...late.matchAll(/"role":"assistant".*?"timestamp":(\d+)/g)].map((m) => Number(m[1]));
    const inWindow = times.filter((t) => t >= cut).length;
    expect(inWindow).toBeGreaterThan(0);
    expect(inWindow).toBeLessThan(times.length);
    expect(row).toMatchObject({ requests: inWindow, requests_total: times.length });
    expect(row.paid_usd).toBeCloseTo(inWindow * PER_REQUEST_USD, 12);
  });

  test("nothing in the window: a zero total and what was older, exit 0", () => {
    const r = run(["report", "--all", "--since", "1h"], dir, { mtimes: { "--p1--/a.jsonl": T0 } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no request in the last 1 hour (1 session older)");
    expect(r.stdout).toContain("last 1 hour: 0 sessions, 0 requests, $0.00 paid");
  });
});

describe("report --all: clear errors", () => {
  test("a bad --since: the value and the accepted forms, exit 2, nothing replayed", () => {
    const r = run(["report", "--all", "--since", "yesterday"], join(tmp, "none"));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("pi-context-keeper: --since yesterday: expected a duration back from now (30d, 12h, 2w) or a date (2025-11-01)\n");
  });
  test("an empty folder and a missing one are named, with where sessions are looked for; exit 1", () => {
    const empty = sessionsFolder("empty", {});
    const e = run(["report", "--all"], empty);
    expect(e.code).toBe(1);
    expect(e.stderr).toBe(`pi-context-keeper: the Pi sessions folder ${empty} holds no session files (*.jsonl); set PI_CODING_AGENT_DIR if your sessions live elsewhere\n`);
    const missing = run(["report", "--all"], join(tmp, "missing", "sessions"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("does not exist");
  });
  test("every file unreadable: all counted, exit 1", () => {
    const dir = sessionsFolder("locked", { "--p--/x.jsonl": "{}\n" });
    const r = run(["report", "--all"], dir, { unreadable: ["x.jsonl"] });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("skipped 1 unreadable file: --p--/x.jsonl (permission denied)");
  });
});
