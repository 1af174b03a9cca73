/** What one fuzzed session reports: its totals, and the first rule it broke. */

export interface SessionTotals {
  requests: number;
  flushes: number;
  refsOffered: number;
  refsRecovered: number;
  restarts: number;
  faults: number;
  compactions: number;
  treeMoves: number;
  /** Spilled originals recovered from their side file after a compaction took them out of view. */
  spillRecoveries: number;
  /** Offered originals at or above the spill threshold without a side file (a failure under --strict-spill). */
  unspilled: number;
  /** Re-plans at a render because the cache was already lost. */
  coldReplans: number;
  /** Flushes the in-loop trigger started (inside a tool loop, when it paid). */
  loopFlushes: number;
}

export interface Violation {
  /** Index of the action in the script. */
  action: number;
  /** Requests checked before the one that broke (or the step that broke). */
  request: number;
  rule: string;
}

export class FuzzViolation extends Error {
  constructor(readonly rule: string) {
    super(rule);
  }
}

export function emptyTotals(): SessionTotals {
  return { requests: 0, flushes: 0, refsOffered: 0, refsRecovered: 0, restarts: 0, faults: 0, compactions: 0, treeMoves: 0, spillRecoveries: 0, unspilled: 0, coldReplans: 0, loopFlushes: 0 };
}

export interface RunOptions {
  /** An offered original at or above the spill threshold without a side file is a violation (default: counted only). */
  strictSpill?: boolean;
}
