/**
 * `pi-context-keeper report --all [--since 30d]`: every session in Pi's sessions folder,
 * replayed one after the other (bare and keeper arms unless `--arms` asks for more, no chart),
 * one row per session with a request inside the window, and the total in dollars.
 *
 * Nothing about one file stops the others: a file that cannot be read, holds no billed
 * request or fails to replay is skipped and counted (named on stderr and in the JSON). Files
 * last modified before the window are not opened at all. Progress goes to stderr.
 */
import { basename, relative } from "node:path";
import { selectArms, ARMS } from "../arms.ts";
import { allSessionRow, allSessionsTable, allTotalLines, allTotals, type AllSessionRow, type AllTotals } from "../all-sessions.ts";
import { createProgress } from "../progress.ts";
import { reportSession } from "../session-report.ts";
import type { ReportArgs } from "./args.ts";
import { readErrorReason } from "./input-check.ts";
import { contextWindowLookup, listSessionFiles, type SessionFileInfo } from "./locations.ts";
import { registryCostModels } from "./model-prices.ts";
import { CALIBRATION_LIMIT } from "./report-notes.ts";
import type { CliIo } from "./run-report.ts";
import { parseSince } from "./since.ts";

export interface AllReportOutput {
  tool: "pi-context-keeper report --all";
  sessions_dir: string;
  /** Start of the window (ISO), null without --since. */
  since: string | null;
  window: string;
  arms: string[];
  sessions: AllSessionRow[];
  total: AllTotals;
  skipped: {
    /** Files that could not be read, with the reason. */
    unreadable: Array<{ file: string; reason: string }>;
    /** Files with no billed request to replay (not a session, or nothing answered). */
    empty: string[];
    /** Files whose replay failed, with the error. */
    failed: Array<{ file: string; message: string }>;
    /** Sessions with no request inside the window. */
    outside_window: number;
  };
  runtime_seconds: number;
}

const LISTED = 10;

/** One line per group of skipped files, naming the first few. */
function skippedLines(s: AllReportOutput["skipped"]): string[] {
  const few = (names: string[]) => `${names.slice(0, LISTED).join(", ")}${names.length > LISTED ? `, and ${names.length - LISTED} more` : ""}`;
  const lines: string[] = [];
  if (s.unreadable.length > 0) lines.push(`skipped ${s.unreadable.length} unreadable file${s.unreadable.length === 1 ? "" : "s"}: ${few(s.unreadable.map((u) => `${u.file} (${u.reason})`))}`);
  if (s.empty.length > 0) lines.push(`skipped ${s.empty.length} file${s.empty.length === 1 ? "" : "s"} with no billed request: ${few(s.empty)}`);
  if (s.failed.length > 0) lines.push(`skipped ${s.failed.length} file${s.failed.length === 1 ? "" : "s"} whose replay failed: ${few(s.failed.map((f) => `${f.file} (${f.message})`))}`);
  return lines;
}

export function runAllCli(args: ReportArgs, io: CliIo): number {
  const clock = io.clock ?? Date.now;
  const since = args.since === undefined ? undefined : parseSince(args.since, clock());
  if (since && !since.ok) {
    io.stderr(`pi-context-keeper: ${since.message}\n`);
    return 2;
  }
  const fromMs = since?.ok ? since.fromMs : Number.NEGATIVE_INFINITY;
  const windowLabel = since?.ok ? since.label : "all sessions";
  const { arms, unknown } = args.arms === undefined ? { arms: ARMS.filter((a) => a.name === "bare" || a.name === "keeper"), unknown: [] } : selectArms(args.arms);
  if (unknown.length > 0) {
    io.stderr(`pi-context-keeper: unknown arm(s) ${unknown.join(", ")}; known: ${ARMS.map((a) => a.name).join(", ")}\n`);
    return 2;
  }
  const listed = (io.listSessions ?? listSessionFiles)(io.sessionsDir);
  if (listed.files.length === 0) {
    const why = listed.exists ? "holds no session files (*.jsonl)" : "does not exist";
    io.stderr(`pi-context-keeper: the Pi sessions folder ${io.sessionsDir} ${why}; set PI_CODING_AGENT_DIR if your sessions live elsewhere\n`);
    return 1;
  }
  // A file last written before the window holds no request inside it.
  const inWindow = (f: SessionFileInfo) => !(f.mtimeMs < fromMs);
  const files = listed.files.filter(inWindow).sort((a, b) => a.mtimeMs - b.mtimeMs);
  const name = (path: string) => relative(io.sessionsDir, path) || basename(path);

  const started = io.now();
  const progress = createProgress({ write: io.stderr, isTTY: io.stderrIsTTY });
  const contextWindow = contextWindowLookup();
  const costModels = registryCostModels();
  const rows: AllSessionRow[] = [];
  const skipped: AllReportOutput["skipped"] = { unreadable: [], empty: [], failed: [], outside_window: listed.files.length - files.length };
  files.forEach((f, i) => {
    const file = name(f.path);
    const probe = io.probeFile(f.path);
    if (!probe.ok) {
      skipped.unreadable.push({ file, reason: readErrorReason(probe.code) });
      return;
    }
    try {
      const run = reportSession({
        file: f.path,
        arms,
        summaries: args.summaries,
        contextWindow,
        costModels,
        ...(io.piCompaction ? { piCompaction: io.piCompaction.settings } : {}),
        detail: "totals",
        onProgress: (p) => progress.update((i + (p.armIndex + (p.armDone ? 1 : 0.5)) / p.armCount) / files.length, `session ${i + 1}/${files.length} ${basename(f.path)}`),
      });
      if (run.report.requests === 0) {
        // An unreadable file reads as empty, with a diagnostic saying why.
        const cannotRead = run.report.diagnostics.find((d) => d.message.startsWith("cannot read file"));
        if (cannotRead) skipped.unreadable.push({ file, reason: cannotRead.message.replace(/^cannot read file: /, "") });
        else skipped.empty.push(file);
        return;
      }
      const row = allSessionRow(file, run, fromMs);
      if (row) rows.push(row);
      else skipped.outside_window++;
    } catch (error) {
      skipped.failed.push({ file, message: (error as Error).message });
    }
  });
  progress.done();
  const total = allTotals(rows, CALIBRATION_LIMIT);
  const runtime = (io.now() - started) / 1000;
  for (const line of [...(io.piCompaction?.notes ?? []), ...skippedLines(skipped)]) io.stderr(`${line}\n`);
  if (args.json) {
    const output: AllReportOutput = {
      tool: "pi-context-keeper report --all",
      sessions_dir: io.sessionsDir,
      since: since?.ok ? new Date(fromMs).toISOString() : null,
      window: windowLabel,
      arms: arms.map((a) => a.name),
      sessions: rows,
      total,
      skipped,
      runtime_seconds: runtime,
    };
    io.stdout(`${JSON.stringify(output)}\n`);
  } else {
    const parts = [
      `Sessions in ${io.sessionsDir} (${windowLabel}): what each cost, and the other way (without the keeper for sessions recorded with it, with it for the others)`,
      ...(rows.length > 0 ? [allSessionsTable(rows, CALIBRATION_LIMIT)] : [`no request ${windowLabel.startsWith("last") ? `in the ${windowLabel}` : windowLabel} (${skipped.outside_window} session${skipped.outside_window === 1 ? "" : "s"} older)`]),
      allTotalLines(total, windowLabel, CALIBRATION_LIMIT).join("\n"),
      `replayed ${files.length - skipped.unreadable.length} session file${files.length === 1 ? "" : "s"} in ${runtime.toFixed(1)} s`,
    ];
    io.stdout(`${parts.join("\n\n")}\n`);
  }
  return rows.length > 0 || skipped.outside_window > 0 ? 0 : 1;
}
