/**
 * `report --all`: every session of the sessions folder as one row, and the total in dollars.
 * Pure: session runs in, rows, totals and text out.
 *
 * A row sums the requests recorded inside the window (`fromMs`, from `--since`): what their
 * recorded usage cost ("paid") and what the other arm costs for them — bare Pi for a session
 * recorded with the keeper ("≈ without"), the keeper for one recorded without it ("≈ with").
 * Each session is still replayed whole (the cache and the keeper's state come from its whole
 * history); summarizer dollars, which have no request of their own, count pro rata to the
 * requests inside the window.
 */
import type { SessionRun } from "./session-report.ts";
import { formatTable, usd } from "./table.ts";

export interface AllSessionRow {
  /** The file, relative to the sessions folder. */
  file: string;
  first_request: string;
  last_request: string;
  /** Requests inside the window (of `requests_total` replayed). */
  requests: number;
  requests_total: number;
  recorded_with: "keeper" | "bare";
  paid_usd: number;
  /** The other arm for the same requests: bare Pi on a keeper recording, the keeper otherwise. */
  counterfactual_usd: number;
  /** bare − keeper, with `paid_usd` standing for the arm the session was recorded with. */
  saved_usd: number;
  calibration_error: number;
  estimator: "per-session" | "fixed";
}

const sum = (xs: readonly number[], keep: (i: number) => boolean) => xs.reduce((n, x, i) => (keep(i) ? n + x : n), 0);

/** The session's row inside the window, or undefined when none of its requests is in it. */
export function allSessionRow(file: string, run: SessionRun, fromMs = Number.NEGATIVE_INFINITY): AllSessionRow | undefined {
  const { report, requests } = run;
  const inWindow = requests.timestamps.map((t) => t >= fromMs);
  const n = inWindow.filter(Boolean).length;
  if (n === 0) return undefined;
  const keep = (i: number) => inWindow[i]!;
  const share = n / requests.timestamps.length;
  const paidRequests = sum(requests.paid, () => true);
  // What was paid besides the requests (the keeper's recorded summarizer calls), pro rata.
  const paid = sum(requests.paid, keep) + (report.money.paid_usd - paidRequests) * share;
  const other = report.recorded_with === "keeper" ? "bare" : "keeper";
  const counterfactual = sum(requests.arms[other] ?? [], keep) + (report.arms[other]?.usd_summarizer ?? 0) * share;
  const times = requests.timestamps.filter((_, i) => keep(i));
  return {
    file,
    first_request: new Date(Math.min(...times)).toISOString(),
    last_request: new Date(Math.max(...times)).toISOString(),
    requests: n,
    requests_total: requests.timestamps.length,
    recorded_with: report.recorded_with,
    paid_usd: paid,
    counterfactual_usd: counterfactual,
    saved_usd: report.recorded_with === "keeper" ? counterfactual - paid : paid - counterfactual,
    calibration_error: report.calibration.total_error,
    estimator: report.calibration.estimator.source,
  };
}

export interface GroupTotal {
  sessions: number;
  requests: number;
  paid_usd: number;
  /** bare Pi's replay for keeper recordings, the keeper's for the others. */
  counterfactual_usd: number;
  saved_usd: number;
}

export interface AllTotals {
  sessions: number;
  requests: number;
  paid_usd: number;
  recorded_with_keeper: GroupTotal;
  recorded_without: GroupTotal;
  /** Sessions whose calibration error is above the limit. */
  miscalibrated: number;
}

const group = (rows: readonly AllSessionRow[]): GroupTotal => ({
  sessions: rows.length,
  requests: rows.reduce((n, r) => n + r.requests, 0),
  paid_usd: rows.reduce((n, r) => n + r.paid_usd, 0),
  counterfactual_usd: rows.reduce((n, r) => n + r.counterfactual_usd, 0),
  saved_usd: rows.reduce((n, r) => n + r.saved_usd, 0),
});

export function allTotals(rows: readonly AllSessionRow[], calibrationLimit: number): AllTotals {
  const keeper = group(rows.filter((r) => r.recorded_with === "keeper"));
  const bare = group(rows.filter((r) => r.recorded_with === "bare"));
  return {
    sessions: rows.length,
    requests: keeper.requests + bare.requests,
    paid_usd: keeper.paid_usd + bare.paid_usd,
    recorded_with_keeper: keeper,
    recorded_without: bare,
    miscalibrated: rows.filter((r) => r.calibration_error > calibrationLimit).length,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const day = (iso: string) => iso.slice(0, 16).replace("T", " ");
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** The rows as a table, oldest last request first; a `!` marks a calibration above the limit. */
export function allSessionsTable(rows: readonly AllSessionRow[], calibrationLimit: number): string {
  const sorted = [...rows].sort((a, b) => a.last_request.localeCompare(b.last_request));
  return formatTable(
    ["session", "last request", "requests", "recorded", "paid", "the other way", "calibration"],
    sorted.map((r) => [
      r.file,
      day(r.last_request),
      r.requests === r.requests_total ? String(r.requests) : `${r.requests} of ${r.requests_total}`,
      r.recorded_with === "keeper" ? "with keeper" : "without",
      usd(r.paid_usd),
      `≈ ${usd(r.counterfactual_usd)} ${r.recorded_with === "keeper" ? "without" : "with"}`,
      `${pct(r.calibration_error)}${r.calibration_error > calibrationLimit ? " !" : ""}${r.estimator === "fixed" ? " (fixed)" : ""}`,
    ]),
  );
}

const savedWords = (g: GroupTotal, verb: "saved" | "to save") => (g.saved_usd >= 0 ? `≈ ${usd(g.saved_usd)} ${verb}` : `≈ ${usd(-g.saved_usd)} more`);

/**
 * The total: "last 30 days: $X paid, ≈ $Y without the keeper" for the sessions recorded with
 * it, "≈ $Z with it" for the others, each group on its line when both are present.
 */
export function allTotalLines(t: AllTotals, windowLabel: string, calibrationLimit: number): string[] {
  const k = t.recorded_with_keeper;
  const b = t.recorded_without;
  const head = `${windowLabel}: ${plural(t.sessions, "session")}, ${plural(t.requests, "request")}, ${usd(t.paid_usd)} paid`;
  const lines = [head];
  if (k.sessions > 0) lines.push(`  recorded with the keeper (${plural(k.sessions, "session")}): ${usd(k.paid_usd)} paid, ≈ ${usd(k.counterfactual_usd)} without the keeper (${savedWords(k, "saved")})`);
  if (b.sessions > 0) lines.push(`  recorded without it (${plural(b.sessions, "session")}): ${usd(b.paid_usd)} paid, ≈ ${usd(b.counterfactual_usd)} with the keeper (${savedWords(b, "to save")})`);
  if (t.miscalibrated > 0) lines.push(`  ${plural(t.miscalibrated, "session")} marked ! replayed with a calibration error above ${pct(calibrationLimit)}: their figures are less reliable`);
  return lines;
}
