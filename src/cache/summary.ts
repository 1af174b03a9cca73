/** Totals over an analyzed run. */
import type { RequestAnalysis } from "./analyzer.ts";

export interface RunSummary {
  requests: number;
  read: number;
  write: number;
  write5m: number;
  write1h: number;
  uncached: number;
  output: number;
  cost: number;
  /** read / (read + write + uncached); 0 for an empty run. */
  hitRatio: number;
  busts: number;
  userPrompts: number;
  /** busts / userPrompts; 0 when there are no user prompts. */
  bustsPerUserPrompt: number;
  pairingViolations: number;
  requestsOverMarkLimit: number;
  invalidations: number;
}

export function summarizeRun(analyses: readonly RequestAnalysis[], options: { userPrompts: number }): RunSummary {
  const sum = (f: (a: RequestAnalysis) => number) => analyses.reduce((acc, a) => acc + f(a), 0);
  const read = sum((a) => a.read);
  const write = sum((a) => a.write);
  const uncached = sum((a) => a.uncached);
  const busts = sum((a) => (a.bust ? 1 : 0));
  const input = read + write + uncached;
  return {
    requests: analyses.length,
    read,
    write,
    write5m: sum((a) => a.write5m),
    write1h: sum((a) => a.write1h),
    uncached,
    output: sum((a) => a.output),
    cost: sum((a) => a.cost),
    hitRatio: input > 0 ? read / input : 0,
    busts,
    userPrompts: options.userPrompts,
    bustsPerUserPrompt: options.userPrompts > 0 ? busts / options.userPrompts : 0,
    pairingViolations: sum((a) => a.pairingViolations.length),
    requestsOverMarkLimit: sum((a) => (a.tooManyMarks ? 1 : 0)),
    invalidations: sum((a) => (a.invalidated ? 1 : 0)),
  };
}
