/**
 * Plain-text tables of a report: one per session and one over all sessions.
 * The total over sessions sums costs and busts, recomputes ratios from the sums, and takes the
 * largest peak; "final" has no meaning across sessions and is left out there.
 */
import type { ArmReport, SessionReport } from "./session-report.ts";

export interface ArmTotals {
  name: string;
  sessions: number;
  requests: number;
  user_prompts: number;
  billed_input: number;
  summarizer_cost: number;
  /** Pi's compactions' summary requests, billed-equivalent. */
  compaction_cost: number;
  compactions: number;
  billed_with_output: number;
  ratio_to_bare: number;
  hit_ratio: number;
  busts: number;
  busts_per_prompt: number;
  peak_context_tokens: number;
  /** Dollars: input + summarizer + output. */
  usd_total: number;
}

/** Per-arm totals over sessions (arms missing from a session are skipped for it). */
export function totalsOverSessions(sessions: readonly SessionReport[]): Record<string, ArmTotals> {
  const out: Record<string, ArmTotals> = {};
  const bareInput = sessions.reduce((n, s) => n + (s.arms.bare?.billed_input ?? 0) + (s.arms.bare?.compaction_cost ?? 0), 0);
  const names = [...new Set(sessions.flatMap((s) => Object.keys(s.arms)))];
  for (const name of names) {
    const rows = sessions.flatMap((s) => (s.arms[name] ? [{ s, a: s.arms[name] }] : []));
    const sum = (f: (a: ArmReport) => number) => rows.reduce((n, r) => n + f(r.a), 0);
    const prompts = rows.reduce((n, r) => n + r.s.user_prompts, 0);
    const read = sum((a) => a.read);
    const input = read + sum((a) => a.write) + sum((a) => a.uncached);
    const busts = sum((a) => a.busts);
    out[name] = {
      name,
      sessions: rows.length,
      requests: sum((a) => a.requests),
      user_prompts: prompts,
      billed_input: sum((a) => a.billed_input),
      summarizer_cost: sum((a) => a.summarizer_cost),
      compaction_cost: sum((a) => a.compaction_cost),
      compactions: sum((a) => a.compactions),
      billed_with_output: sum((a) => a.billed_with_output),
      ratio_to_bare: bareInput > 0 ? (sum((a) => a.billed_input) + sum((a) => a.summarizer_cost) + sum((a) => a.compaction_cost)) / bareInput : 0,
      hit_ratio: input > 0 ? read / input : 0,
      busts,
      busts_per_prompt: prompts > 0 ? busts / prompts : 0,
      peak_context_tokens: rows.reduce((n, r) => Math.max(n, r.a.peak_context_tokens), 0),
      usd_total: sum((a) => a.usd_total),
    };
  }
  return out;
}

/** 12345678 → "12.3M", 45678 → "45.7k", 512 → "512". */
export function compactNumber(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** $12.34, $0.0123 (two significant digits below a cent). */
export function usd(x: number): string {
  if (!Number.isFinite(x)) return "$?";
  if (Math.abs(x) >= 0.01 || x === 0) return `$${x.toFixed(2)}`;
  return `$${x.toPrecision(2)}`;
}

const share = (saved: number, of: number) => (of > 0 ? `, ${((saved / of) * 100).toFixed(0)}%` : "");

/**
 * The money sentence. A keeper recording: "you paid $X; without the keeper ≈ $Y (≈ $Z saved)";
 * a recording of bare Pi: "you paid $X; with the keeper ≈ $Y (≈ $Z saved)".
 */
export function moneyLine(report: Pick<SessionReport, "money" | "recorded_with">): string {
  const m = report.money;
  const paid = `you paid ${usd(m.paid_usd)}`;
  if (m.keeper_usd === null || m.saved_usd === null) return paid;
  const saved = m.saved_usd >= 0 ? `≈ ${usd(m.saved_usd)} saved${share(m.saved_usd, m.paid_usd + (report.recorded_with === "keeper" ? m.saved_usd : 0))}` : `≈ ${usd(-m.saved_usd)} more`;
  return report.recorded_with === "keeper"
    ? `${paid} (recorded with the keeper); without the keeper ≈ ${usd(m.bare_usd)} (${saved})`
    : `${paid}; with the keeper ≈ ${usd(m.keeper_usd)} (${saved})`;
}

function calibrationLine(report: SessionReport): string {
  const c = report.calibration;
  const fitted = c.estimator.source === "per-session";
  const what = c.arm === "keeper" ? "the keeper arm's replay vs the usage recorded with it" : "the replay vs the recorded cache usage";
  const parts = [
    `calibration error ${pct(c.total_error)} (${what}, ${fitted ? "in-sample: estimator fitted to this session" : "fixed corpus constants"})`,
    ...(c.total_error_cross_validated !== null ? [`${pct(c.total_error_cross_validated)} cross-validated (fitted on the first half, scored on the second)`] : []),
    `${pct(c.total_error_ttl_only)} with TTL expiry as the only invalidation`,
  ];
  const note = c.estimator.note ? (fitted ? ` [estimator: ${c.estimator.note}]` : ` [no per-session fit: ${c.estimator.note}]`) : "";
  return `${parts.join("; ")}${note}`;
}

function modelsLine(report: SessionReport): string {
  if (report.models.length === 0) return "";
  const one = (m: SessionReport["models"][number]) =>
    `${m.model} (${m.requests} req; ${m.cache_rule}; $${m.prices.input}/$${m.prices.output} in/out, read $${m.prices.cache_read}${m.prices.cache_write > 0 ? `, write $${m.prices.cache_write}` : ""} per M, ${m.price_source}` +
    `${report.models.length > 1 ? `; calibration ${pct(m.total_error)}, ${m.estimator}` : ""})` +
    (m.note ? ` [${m.note}]` : "");
  return `\nmodels: ${report.models.map(one).join("; ")}`;
}

/** The reasoning the provider dropped from the recorded requests (Pi's diagnostics), when any. */
function reasoningLine(report: SessionReport): string {
  const r = report.reasoning_dropped;
  if (!r) return "";
  const why = r.reasons.length > 0 ? ` (${r.reasons.join(", ")})` : "";
  return `\nreasoning dropped by the provider (recorded): ${r.blocks} thinking block${r.blocks === 1 ? "" : "s"} on ${r.requests} request${r.requests === 1 ? "" : "s"}${why}`;
}

export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const SESSION_HEADER = ["arm", "billed input", "ratio", "cost", "cache hit", "busts", "busts/prompt", "peak ctx", "final ctx", "summarizer", "compactions", "flushes"];

/** Pi's compactions of an arm and what their summary requests cost: "1 ($0.12)", or "-". */
const compactionsCell = (n: number, dollars: number) => (n > 0 ? `${n} (${usd(dollars)})` : "-");

export function sessionTable(report: SessionReport): string {
  const rows = Object.values(report.arms).map((a) => [
    a.name,
    compactNumber(a.billed_input),
    a.ratio_to_bare.toFixed(3),
    usd(a.usd_total),
    pct(a.hit_ratio),
    String(a.busts),
    a.busts_per_prompt.toFixed(2),
    compactNumber(a.peak_context_tokens),
    compactNumber(a.final_context_tokens),
    compactNumber(a.summarizer_cost),
    compactionsCell(a.compactions, a.usd_compaction),
    a.flushes > 0 ? `${a.flushes} (${a.budget_flushes} budget, ${a.loop_flushes} loop)` : "-",
  ]);
  const title =
    `${report.file}\n` +
    `${report.requests} requests, ${report.user_prompts} user prompts, model ${report.model || "?"}; ` +
    `${moneyLine(report)}; the replay of what you paid: ${usd(report.money.replayed_paid_usd)}\n` +
    `${calibrationLine(report)}; ${report.external_invalidations} external cache invalidations replayed` +
    modelsLine(report) +
    reasoningLine(report);
  return `${title}\n${formatTable(SESSION_HEADER, rows)}`;
}

const TOTAL_HEADER = ["arm", "sessions", "billed input", "ratio", "cost", "cache hit", "busts", "busts/prompt", "peak ctx", "summarizer", "compactions"];

export function totalTable(totals: Record<string, ArmTotals>): string {
  const rows = Object.values(totals).map((t) => [
    t.name,
    String(t.sessions),
    compactNumber(t.billed_input),
    t.ratio_to_bare.toFixed(3),
    usd(t.usd_total),
    pct(t.hit_ratio),
    String(t.busts),
    t.busts_per_prompt.toFixed(2),
    compactNumber(t.peak_context_tokens),
    compactNumber(t.summarizer_cost),
    t.compactions > 0 ? String(t.compactions) : "-",
  ]);
  return `Total over sessions\n${formatTable(TOTAL_HEADER, rows)}`;
}

export const TABLE_LEGEND = [
  "billed input: cache-aware input cost in uncached-input-token units of each request's model, at its price ratios",
  "(Anthropic: read 0.1x, 5-min write 1.25x, 1-h write 2x; OpenAI/Google: no write premium, read at the cache-read price);",
  "ratio: (billed input + summarizer + compactions) / bare's (billed input + compactions); cost: dollars for input, summarizer, compactions and output at the models' prices;",
  "cache hit: read / all input tokens;",
  "busts: requests that missed the previous request's still-live cached prefix; ctx: estimated prompt tokens;",
  "summarizer: summarizer cost in the same units; compactions: Pi's compactions and their summary requests' dollars (the recording's in the arm it was recorded with,",
  "simulated where the arm's own context passes Pi's threshold in the others); flushes: flushes replayed (those fired by the budget trigger, and inside a tool loop when it paid).",
].join("\n");
