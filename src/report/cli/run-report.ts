/**
 * `pi-context-keeper report`: the shell around `reportSession`. All effects (output streams,
 * file writes, the clock) come in through `CliIo`, so tests can run it in-process too.
 */
import { basename, join, resolve } from "node:path";
import { ARMS, selectArms } from "../arms.ts";
import { describeSummarySource } from "../replay-summaries.ts";
import { reportSession, type SessionReport } from "../session-report.ts";
import { createProgress } from "../progress.ts";
import { sessionChart } from "../svg-chart.ts";
import { moneyLine, sessionTable, TABLE_LEGEND, totalsOverSessions, totalTable } from "../table.ts";
import { parseArgs, USAGE, type ReportArgs } from "./args.ts";
import { unreadableInputs, type FileProbe } from "./input-check.ts";
import { BUNDLED_SAMPLE, contextWindowLookup, DEFAULT_OUT_DIR, newestSession, outDirProblem, type SessionFileInfo } from "./locations.ts";
import { runAllCli } from "./run-all.ts";
import { beatsDefaultsSentence, calibrationProblems, calibrationWarning, estimatorWarning, recordingNotes } from "./report-notes.ts";
import { registryCostModels } from "./model-prices.ts";
import type { PiCompactionLookup } from "./pi-settings.ts";

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  stderrIsTTY: boolean;
  cwd: string;
  /** Pi's sessions directory (`<agent dir>/sessions`). */
  sessionsDir: string;
  mkdir(path: string): void;
  writeFile(path: string, text: string): void;
  now(): number;
  /** Can this session file be read? (checked for every input before anything is replayed) */
  probeFile: FileProbe;
  /** This package's version, for --version. */
  version: string;
  /** Wall-clock time in ms (`--since`); default `Date.now`. */
  clock?: () => number;
  /** The session files under `sessionsDir` (`--all`); default: the file system's (`listSessionFiles`). */
  listSessions?: (sessionsDir: string) => { exists: boolean; files: SessionFileInfo[] };
  /** Pi's compaction settings (the agent's settings.json), for the arms where Pi's compaction is simulated; default Pi's defaults. */
  piCompaction?: PiCompactionLookup;
}

export interface ReportOutput {
  tool: "pi-context-keeper report";
  summaries: { source: string; description: string };
  arms: Array<{ name: string; description: string }>;
  sessions: Array<SessionReport & { chart?: string }>;
  total: { arms: ReturnType<typeof totalsOverSessions> };
  runtime_seconds: number;
}

function chartName(file: string, index: number, taken: Set<string>): string {
  const base = basename(file).replace(/\.jsonl$/i, "").replace(/[^\w.-]+/g, "_") || `session-${index + 1}`;
  let name = `${base}.svg`;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}.svg`;
  taken.add(name);
  return name;
}

function inputFiles(args: ReportArgs, io: CliIo): string[] {
  if (args.files.length > 0) return args.files.map((f) => resolve(io.cwd, f));
  const newest = newestSession(io.sessionsDir);
  if (newest) {
    io.stderr(`pi-context-keeper: replaying the newest Pi session: ${newest}\n`);
    return [newest];
  }
  io.stderr(`pi-context-keeper: no Pi session under ${io.sessionsDir}; replaying the bundled sample ${BUNDLED_SAMPLE}\n`);
  return [BUNDLED_SAMPLE];
}

export function runReportCli(argv: readonly string[], io: CliIo): number {
  const args = parseArgs(argv);
  if (args.command === "help") {
    io.stdout(`${USAGE}\n\nArms:\n${ARMS.map((a) => `  ${a.name.padEnd(22)} ${a.description}`).join("\n")}\n`);
    return 0;
  }
  if (args.command === "version") {
    io.stdout(`pi-context-keeper ${io.version}\n`);
    return 0;
  }
  if (args.command === "error") {
    io.stderr(`pi-context-keeper: ${args.message}\n`);
    return 2;
  }
  if (args.all) return runAllCli(args, io);
  const { arms, unknown } = selectArms(args.arms);
  if (unknown.length > 0) {
    io.stderr(`pi-context-keeper: unknown arm(s) ${unknown.join(", ")}; known: ${ARMS.map((a) => a.name).join(", ")}\n`);
    return 2;
  }
  const files = inputFiles(args, io);
  const unreadable = unreadableInputs(files, io.probeFile);
  if (unreadable.length > 0) {
    for (const line of unreadable) io.stderr(`pi-context-keeper: ${line}\n`);
    return 2;
  }
  const outDir = resolve(io.cwd, args.out ?? DEFAULT_OUT_DIR);
  if (args.chart) {
    const problem = outDirProblem(outDir, files, io.sessionsDir);
    if (problem) {
      io.stderr(`pi-context-keeper: ${problem}\n`);
      return 2;
    }
  }

  const started = io.now();
  const progress = createProgress({ write: io.stderr, isTTY: io.stderrIsTTY });
  const contextWindow = contextWindowLookup();
  const costModels = registryCostModels();
  const sessions: ReportOutput["sessions"] = [];
  const taken = new Set<string>();
  let failed = false;
  /** Diagnostics, printed once the progress bar is gone. */
  const notes: string[] = [...(io.piCompaction?.notes ?? [])];
  files.forEach((file, fileIndex) => {
    const run = reportSession({
      file,
      arms,
      summaries: args.summaries,
      contextWindow,
      costModels,
      ...(io.piCompaction ? { piCompaction: io.piCompaction.settings } : {}),
      onProgress: (p) => {
        const inArm = p.armDone ? 1 : 0.4 * (p.requests > 0 ? p.request / p.requests : 0);
        const fraction = (fileIndex + (p.armIndex + inArm) / p.armCount) / files.length;
        progress.update(fraction, `${basename(file)}: arm ${p.arm} (${p.armIndex + 1}/${p.armCount})`);
      },
    });
    const report: SessionReport & { chart?: string } = run.report;
    for (const d of report.diagnostics) notes.push(`${d.file}${d.line > 0 ? `:${d.line}` : ""}: ${d.message}`);
    if (report.requests === 0) {
      failed = true;
      notes.push(`${file}: no replayable request (no assistant message with recorded usage was found); reported with zeros`);
    } else if (args.chart && run.series.bare && run.series.keeper) {
      io.mkdir(outDir);
      const path = join(outDir, chartName(file, fileIndex, taken));
      io.writeFile(
        path,
        sessionChart({
          title: `${basename(file)}: bare vs keeper; ${moneyLine(report)}`,
          subtitle: `${report.requests} requests, ${report.user_prompts} user prompts; ratio to bare ${report.arms.keeper.ratio_to_bare.toFixed(3)}; summaries from the size model`,
          bare: run.series.bare,
          keeper: run.series.keeper,
        }),
      );
      report.chart = path;
    }
    sessions.push(report);
  });
  progress.done();
  for (const n of [...notes, ...recordingNotes(sessions)]) io.stderr(`${n}\n`);
  const miscalibrated = calibrationProblems(sessions);
  if (miscalibrated.length > 0) io.stderr(`${calibrationWarning(miscalibrated)}\n`);
  const unfitted = estimatorWarning(sessions);
  if (unfitted) io.stderr(`${unfitted}\n`);

  const totals = totalsOverSessions(sessions);
  const runtime = (io.now() - started) / 1000;
  const summaryLine = describeSummarySource(args.summaries);
  if (args.json) {
    const output: ReportOutput = {
      tool: "pi-context-keeper report",
      summaries: { source: args.summaries, description: summaryLine },
      arms: arms.map((a) => ({ name: a.name, description: a.description })),
      sessions,
      total: { arms: totals },
      runtime_seconds: runtime,
    };
    io.stdout(`${JSON.stringify(output)}\n`);
  } else {
    const parts = sessions.map((s) => {
      const sentence = beatsDefaultsSentence(s);
      return `${sessionTable(s)}${s.chart ? `\nchart: ${s.chart}` : ""}${sentence ? `\n${sentence}` : ""}`;
    });
    if (sessions.length > 1) parts.push(totalTable(totals));
    parts.push(`${summaryLine}\n${TABLE_LEGEND}\nreplayed in ${runtime.toFixed(1)} s`);
    io.stdout(`${parts.join("\n\n")}\n`);
  }
  if (failed) return 1;
  return args.strict && miscalibrated.length > 0 ? 3 : 0;
}
