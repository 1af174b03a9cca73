/**
 * What the report says besides its tables: a loud warning when the replay does not reproduce
 * the recorded cache usage closely enough to trust its figures, and a sentence when an arm
 * with one feature off beats the defaults on a session. Pure functions over the report.
 */
import type { SessionReport } from "../session-report.ts";

/** Above this calibration error (a fraction) the figures of a session are flagged. */
export const CALIBRATION_LIMIT = 0.1;

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export interface CalibrationProblem {
  file: string;
  error: number;
}

/** Sessions that were replayed (requests > 0) with a calibration error above the limit. */
export function calibrationProblems(sessions: readonly SessionReport[], limit = CALIBRATION_LIMIT): CalibrationProblem[] {
  return sessions.filter((s) => s.requests > 0 && Math.abs(s.calibration.total_error) > limit).map((s) => ({ file: s.file, error: Math.abs(s.calibration.total_error) }));
}

/** The warning block printed (to stderr) before the results; empty when nothing is wrong. */
export function calibrationWarning(problems: readonly CalibrationProblem[], limit = CALIBRATION_LIMIT): string {
  if (problems.length === 0) return "";
  const rows = problems.map((p) => `  ${p.file}: calibration error ${pct(p.error)}`);
  return [
    `WARNING: the replay does not reproduce the cache usage Pi recorded (error above ${pct(limit)}):`,
    ...rows,
    "  The figures for these sessions are not reliable: the cache model or the session's provider",
    "  does not match what was billed. Use --strict to make this an error (exit 3).",
  ].join("\n");
}

/**
 * Sessions whose token estimator could not be fitted to their own usage (or one of whose
 * models could not): the fixed constants, fitted on another session, then count every
 * request's tokens in every arm — the replay of what was paid and the counterfactual alike —
 * so the figures can be off by more than the calibration error shows. One block, empty when
 * every session was fitted.
 */
export function estimatorWarning(sessions: readonly SessionReport[]): string {
  const rows: string[] = [];
  for (const s of sessions) {
    if (s.requests === 0) continue;
    const e = s.calibration.estimator;
    if (e.source === "fixed") rows.push(`  ${s.file}: ${e.note ?? "no fit"} (calibration error ${pct(s.calibration.total_error)} with the fixed constants)`);
    else {
      const fixed = s.models.filter((m) => m.estimator === "fixed").map((m) => m.model);
      if (fixed.length > 0) rows.push(`  ${s.file}: ${fixed.join(", ")} (too few requests or no fit in range for that model family)`);
    }
  }
  if (rows.length === 0) return "";
  return [
    "WARNING: the token estimator could not be fitted to these sessions' recorded usage:",
    ...rows,
    "  The fixed constants (fitted on another session) counted the tokens of every request there, in",
    "  every arm: what was paid and what the other arm would have cost may be off by more than the",
    "  calibration error shows.",
  ].join("\n");
}

/** What the recordings changed in how a model is replayed (no cache writes, no cache use), one line each. */
export function recordingNotes(sessions: readonly SessionReport[]): string[] {
  return sessions.flatMap((s) => s.models.flatMap((m) => (m.note ? [`note: ${s.file}: ${m.note}`] : [])));
}

export interface ArmBeatingDefaults {
  name: string;
  description: string;
  ratio: number;
  keeperRatio: number;
}

/** Arms other than `bare` and `keeper` whose ratio to bare is lower than the defaults', best first. */
export function armsBeatingDefaults(session: SessionReport): ArmBeatingDefaults[] {
  const keeper = session.arms.keeper;
  if (!keeper || session.requests === 0) return [];
  return Object.values(session.arms)
    .filter((a) => a.name !== "bare" && a.name !== "keeper" && a.ratio_to_bare < keeper.ratio_to_bare)
    .sort((a, b) => a.ratio_to_bare - b.ratio_to_bare)
    .map((a) => ({ name: a.name, description: a.description, ratio: a.ratio_to_bare, keeperRatio: keeper.ratio_to_bare }));
}

/** The sentence under a session's table, or "" when the defaults are best. */
export function beatsDefaultsSentence(session: SessionReport): string {
  const better = armsBeatingDefaults(session);
  if (better.length === 0) return "";
  const [best, ...rest] = better;
  const others = rest.length > 0 ? ` (also cheaper: ${rest.map((a) => `${a.name} ${a.ratio.toFixed(3)}`).join(", ")})` : "";
  return (
    `On this session the defaults are not the cheapest: ${best.name} (${best.description}) costs ${best.ratio.toFixed(3)} of bare Pi ` +
    `against ${best.keeperRatio.toFixed(3)} for the defaults${others}. The defaults are chosen for sessions in general; ` +
    `if your sessions look like this one, that arm's setting may suit you better.`
  );
}
