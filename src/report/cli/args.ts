/** Command-line arguments of `pi-context-keeper`. */
import { REPLAY_SUMMARY_SOURCES, type ReplaySummarySource } from "../replay-summaries.ts";

export interface ReportArgs {
  command: "report";
  files: string[];
  json: boolean;
  out: string | undefined;
  arms: string | undefined;
  chart: boolean;
  summaries: ReplaySummarySource;
  /** Exit 3 when a session's calibration error exceeds the limit (the warning is printed either way). */
  strict: boolean;
  /** `--all`: every session in Pi's sessions folder, one row each and a total. */
  all: boolean;
  /** `--since` as given (checked against the clock by the caller); only with `--all`. */
  since: string | undefined;
}

export type ParsedArgs = { command: "help" } | { command: "version" } | ReportArgs | { command: "error"; message: string };

export const USAGE = `Usage: pi-context-keeper report [session.jsonl ...] [options]
       pi-context-keeper report --all [--since 30d] [--json]

Replays recorded Pi sessions request by request through the prompt-cache model, once per
arm (bare Pi, this extension with defaults, and one-setting variants), and prints what each
arm would have cost. No model is called: summaries come from a deterministic size model.

With no file: the newest session under the Pi agent dir (PI_CODING_AGENT_DIR, default
~/.pi/agent, in sessions/), or the bundled sample when there is none. A session recorded
with this extension is reported as what you paid, with bare Pi as the counterfactual.

Options:
  --all                every session in the Pi sessions folder: one row each, a total in
                       dollars (arms bare and keeper unless --arms says more; no chart)
  --since WHEN         with --all: only requests since WHEN, a duration back from now
                       (30d, 12h, 2w) or a date (2025-11-01)
  --json               print one JSON object on stdout instead of the tables
  --out DIR            where charts go (default ./pi-context-keeper-report/); never the
                       directory of a session file or inside the Pi sessions dir
  --arms a,b,...       arms to run besides bare and keeper (default: all); see below
  --no-chart           write no SVG chart (then nothing at all is written)
  --summaries MODE     size-model (default) or extractive
  --strict             exit 3 when a session's calibration error exceeds 10% (a warning is
                       printed before the results either way)
  -V, --version        the version of pi-context-keeper
  -h, --help           this text

Exit codes: 0 report printed; 1 some file gave no replayable request (the others are still
reported); 2 usage error (unknown option or arm, an --out that is not allowed, or a session
file that is missing or cannot be read: nothing is replayed then; a bad --since); 3 with
--strict, a calibration error above 10% (the report is still printed). With --all,
unreadable files are skipped and counted; 1 when there is no session to report.`;

export function parseArgs(argv: readonly string[]): ParsedArgs {
  if (argv.length === 0 || argv[0] === "-h" || argv[0] === "--help" || argv[0] === "help") return { command: "help" };
  if (argv[0] === "-V" || argv[0] === "--version" || argv[0] === "version") return { command: "version" };
  if (argv[0] !== "report") return { command: "error", message: `unknown command "${argv[0]}" (try: pi-context-keeper report --help)` };
  const out: ReportArgs = { command: "report", files: [], json: false, out: undefined, arms: undefined, chart: true, summaries: "size-model", strict: false, all: false, since: undefined };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string | undefined => {
      const eq = a.indexOf("=");
      if (eq > 0) return a.slice(eq + 1);
      const v = argv[i + 1];
      if (v === undefined || v.startsWith("--")) return undefined;
      i++;
      return v;
    };
    const name = a.startsWith("--") ? a.split("=")[0] : a;
    switch (name) {
      case "-h":
      case "--help":
        return { command: "help" };
      case "-V":
      case "--version":
        return { command: "version" };
      case "--strict":
        out.strict = true;
        break;
      case "--all":
        out.all = true;
        break;
      case "--since": {
        const v = value();
        if (v === undefined) return { command: "error", message: "--since needs a value: a duration back from now (30d, 12h, 2w) or a date (2025-11-01)" };
        out.since = v;
        break;
      }
      case "--json":
        out.json = true;
        break;
      case "--no-chart":
        out.chart = false;
        break;
      case "--out": {
        const v = value();
        if (v === undefined) return { command: "error", message: "--out needs a directory" };
        out.out = v;
        break;
      }
      case "--arms": {
        const v = value();
        if (v === undefined) return { command: "error", message: "--arms needs a comma-separated list" };
        out.arms = v;
        break;
      }
      case "--summaries": {
        const v = value();
        if (!REPLAY_SUMMARY_SOURCES.includes(v as ReplaySummarySource)) return { command: "error", message: `--summaries must be one of ${REPLAY_SUMMARY_SOURCES.join(", ")}` };
        out.summaries = v as ReplaySummarySource;
        break;
      }
      default:
        if (a.startsWith("-") && a !== "-") return { command: "error", message: `unknown option "${a}"` };
        out.files.push(a);
    }
  }
  if (out.since !== undefined && !out.all) return { command: "error", message: "--since goes with --all (every session in the Pi sessions folder)" };
  if (out.all && out.files.length > 0) return { command: "error", message: `--all reports every session in the Pi sessions folder; it takes no files (got ${out.files[0]})` };
  return out;
}
