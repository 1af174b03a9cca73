/**
 * Many sessions from one seed: run them all, add up what was checked, and shrink the first
 * failing one to a minimal script with fast-check (replaying its run path from the seed).
 */
import fc from "fast-check";
import { emptyTotals, runSession, type RunOptions, type SessionTotals, type Violation } from "./run-session.ts";
import { sessionScript, type SessionScript } from "./session-script.ts";

export interface FuzzTotals extends SessionTotals {
  sessions: number;
  /** Sessions that ended on a violation (a refused request, a lost original, a broken restart, a throw). */
  failed: number;
  /** Of those, the requests the provider would refuse. */
  refused: number;
}

export interface FuzzFailure {
  seed: number;
  /** fast-check run path of the shrunk case. */
  path: string;
  violation: Violation;
  /** The minimal script fast-check shrank to. */
  script: SessionScript;
  /** The violation of the script before shrinking. */
  original: Violation;
  /** The run options the failure needs (a known-open check made strict). */
  options?: RunOptions;
  /** Set while the bug is open: the fixture must still reproduce it. */
  open?: string;
}

export interface FuzzOptions {
  sessions: number;
  seed: number;
  /** Shrink the first failure (slower). Default true. */
  shrink?: boolean;
  run?: RunOptions;
  onProgress?: (done: number, totals: FuzzTotals) => void;
}

function add(into: FuzzTotals, t: SessionTotals): void {
  for (const key of Object.keys(t) as (keyof SessionTotals)[]) into[key] += t[key];
}

/** The first violation fast-check shrinks run `runIndex` of `seed` to. */
export async function shrinkRun(seed: number, runIndex: number, original: Violation, options: RunOptions = {}): Promise<FuzzFailure> {
  let last: Violation = original;
  const property = fc.asyncProperty(sessionScript, async (script) => {
    const outcome = await runSession(script, options);
    if (outcome.violation) last = outcome.violation;
    return outcome.violation === undefined;
  });
  const details = await fc.check(property, { seed, path: String(runIndex), numRuns: 1, endOnFailure: false });
  const script = details.counterexample?.[0];
  if (!details.failed || !script) throw new Error(`run ${runIndex} of seed ${seed} no longer fails when replayed`);
  // The last failing call of the property was the shrunk case; run it again for its own violation.
  const final = await runSession(script, options);
  return { seed, path: details.counterexamplePath ?? String(runIndex), violation: final.violation ?? last, script, original, ...(Object.keys(options).length > 0 ? { options } : {}) };
}

export async function fuzzSessions(options: FuzzOptions): Promise<{ totals: FuzzTotals; first?: { index: number; violation: Violation }; failure?: FuzzFailure }> {
  const totals: FuzzTotals = { sessions: 0, failed: 0, refused: 0, ...emptyTotals() };
  let first: { index: number; violation: Violation } | undefined;
  let index = 0;
  const property = fc.asyncProperty(sessionScript, async (script) => {
    const outcome = await runSession(script, options.run);
    totals.sessions++;
    add(totals, outcome.totals);
    if (outcome.violation) {
      totals.failed++;
      if (outcome.violation.rule.startsWith("request refused")) totals.refused++;
      first ??= { index, violation: outcome.violation };
    }
    index++;
    if (options.onProgress && totals.sessions % 100 === 0) options.onProgress(totals.sessions, totals);
    return true;
  });
  await fc.assert(property, { seed: options.seed, numRuns: options.sessions });
  if (!first || options.shrink === false) return { totals, ...(first ? { first } : {}) };
  return { totals, first, failure: await shrinkRun(options.seed, first.index, first.violation, options.run) };
}
