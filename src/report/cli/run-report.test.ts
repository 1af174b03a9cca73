/**
 * `runReportCli` in-process with a recording io: unreadable inputs, --version, the calibration
 * warning and --strict, the sentence when an arm beats the defaults.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syntheticSession } from "../../../test/support/report/arms-fixtures.ts";
import { probeFileSystem } from "./file-probe.ts";
import { armsBeatingDefaults, beatsDefaultsSentence } from "./report-notes.ts";
import { runReportCli, type CliIo, type ReportOutput } from "./run-report.ts";

const tmp = mkdtempSync(join(tmpdir(), "keeper-run-report-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const f = join(tmp, name);
  writeFileSync(f, text);
  return f;
}

/** Runs the CLI; `log` keeps stdout and stderr writes in order, tagged. */
function run(argv: string[]) {
  const log: Array<{ stream: "out" | "err"; text: string }> = [];
  const written: string[] = [];
  const probed: string[] = [];
  const io: CliIo = {
    stdout: (text) => log.push({ stream: "out", text }),
    stderr: (text) => log.push({ stream: "err", text }),
    stderrIsTTY: false,
    cwd: tmp,
    sessionsDir: join(tmp, "no-sessions"),
    mkdir: () => {},
    writeFile: (p) => written.push(p),
    now: () => 0,
    probeFile: (p) => {
      probed.push(p);
      return probeFileSystem(p);
    },
    version: "9.8.7",
  };
  const code = runReportCli(argv, io);
  const text = (s: "out" | "err") => log.filter((l) => l.stream === s).map((l) => l.text).join("");
  return { code, log, stdout: text("out"), stderr: text("err"), written, probed };
}

// A synthetic recording whose usage the replay does not reproduce (calibration error > 100%).
const miscalibrated = write("miscalibrated.jsonl", syntheticSession({ prompts: 3, callsPerPrompt: 1, outputChars: 3000 }));

describe("unreadable session files", () => {
  test("one line per missing file, exit 2, nothing replayed or written", () => {
    const missing = join(tmp, "missing.jsonl");
    const r = run(["report", missing, miscalibrated, join(tmp, "also-missing.jsonl")]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`pi-context-keeper: cannot read ${missing}: no such file\npi-context-keeper: cannot read ${join(tmp, "also-missing.jsonl")}: no such file\n`);
    expect(r.written).toEqual([]);
  });

  test("a directory is refused the same way", () => {
    const r = run(["report", tmp, "--no-chart"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`cannot read ${tmp}: it is a directory`);
  });
});

test("--version prints the package version and replays nothing", () => {
  for (const argv of [["--version"], ["-V"], ["report", "--version"]]) {
    const r = run(argv);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("pi-context-keeper 9.8.7\n");
    expect(r.probed).toEqual([]);
  }
});

describe("calibration above 10%", () => {
  test("a warning on stderr before any result; exit 0 without --strict", () => {
    const r = run(["report", miscalibrated, "--no-chart", "--arms", "keeper"]);
    expect(r.code).toBe(0);
    const warnAt = r.log.findIndex((l) => l.stream === "err" && l.text.startsWith("WARNING:"));
    const firstOut = r.log.findIndex((l) => l.stream === "out");
    expect(warnAt).toBeGreaterThanOrEqual(0);
    expect(warnAt).toBeLessThan(firstOut);
    expect(r.log[warnAt]!.text).toContain(`${miscalibrated}: calibration error`);
    expect(r.stdout).toContain("arm ");
  });

  test("a refused per-session fit is a warning too, naming the reason, before any result", () => {
    const r = run(["report", miscalibrated, "--no-chart", "--arms", "keeper", "--json"]);
    const json = JSON.parse(r.stdout) as ReportOutput;
    const session = json.sessions[0]!;
    expect(session.calibration.estimator.source).toBe("fixed");
    const warnAt = r.log.findIndex((l) => l.stream === "err" && l.text.startsWith("WARNING: the token estimator could not be fitted"));
    expect(warnAt).toBeGreaterThanOrEqual(0);
    expect(warnAt).toBeLessThan(r.log.findIndex((l) => l.stream === "out"));
    expect(r.log[warnAt]!.text).toContain(`${miscalibrated}: ${session.calibration.estimator.note}`);
  });

  test("--strict: the same report, exit 3", () => {
    const r = run(["report", miscalibrated, "--no-chart", "--arms", "keeper", "--strict", "--json"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("WARNING:");
    const json = JSON.parse(r.stdout) as ReportOutput;
    expect(json.sessions[0]!.calibration.total_error).toBeGreaterThan(0.1);
  });
});

test("the sentence under the table appears exactly when an arm beats the defaults", () => {
  const file = write("tight.jsonl", syntheticSession({ prompts: 3, callsPerPrompt: 6, outputChars: 20000 }));
  const argv = ["report", file, "--no-chart", "--arms", "budget-trigger-tight,no-seam"];
  const json = JSON.parse(run([...argv, "--json"]).stdout) as ReportOutput;
  const session = json.sessions[0]!;
  const text = run(argv).stdout;
  const sentence = beatsDefaultsSentence(session);
  if (armsBeatingDefaults(session).length > 0) {
    expect(text).toContain(sentence);
    expect(text).toContain("the defaults are not the cheapest");
  } else expect(text).not.toContain("the defaults are not the cheapest");
}, 60_000);
