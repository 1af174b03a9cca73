/**
 * Fidelity of a summary: which file paths, commands, exit statuses, error lines and image notes
 * (an image left out, and how to get it back) of a batch it does not carry. Paths, commands and error lines must appear verbatim; an exit
 * status must be stated with its number (`exit code 2`, `exited with code 2` ...).
 */
import { type ToolBatch, imageNote } from "./batch.ts";
import { type ExitFact, exitFactLabel, extractCallFacts, summaryStatesExitFact } from "./output-facts.ts";

export interface BatchFacts {
  paths: string[];
  commands: string[];
  exitFacts: ExitFact[];
  errorLines: string[];
  /** Per call with images: what was left out and how to get it back (`imageNote`). */
  images: string[];
}

/** Same shape as the facts, with exit facts as readable labels (`exit code 2`, `timed out`). */
export interface MissingFacts {
  paths: string[];
  commands: string[];
  exitCodes: string[];
  errorLines: string[];
  images: string[];
}

function pushUnique(into: string[], seen: Set<string>, values: string[]): void {
  for (const v of values) {
    if (!seen.has(v)) {
      seen.add(v);
      into.push(v);
    }
  }
}

/** Every fact of a batch, deduplicated across its calls. */
export function batchFacts(batch: ToolBatch): BatchFacts {
  const facts: BatchFacts = { paths: [], commands: [], exitFacts: [], errorLines: [], images: [] };
  const seenPaths = new Set<string>();
  const seenCommands = new Set<string>();
  const seenErrors = new Set<string>();
  const seenExit = new Set<string>();
  for (const call of batch.calls) {
    const f = extractCallFacts(call);
    pushUnique(facts.paths, seenPaths, [...f.argumentPaths, ...f.outputPaths]);
    pushUnique(facts.commands, seenCommands, f.commands);
    pushUnique(facts.errorLines, seenErrors, f.errorLines);
    const images = imageNote(call.images);
    if (images) facts.images.push(images);
    for (const e of f.exitFacts) {
      const label = exitFactLabel(e);
      if (!seenExit.has(label)) {
        seenExit.add(label);
        facts.exitFacts.push(e);
      }
    }
  }
  return facts;
}

export function findMissingFacts(batch: ToolBatch, summary: string): MissingFacts {
  const facts = batchFacts(batch);
  return {
    paths: facts.paths.filter((p) => !summary.includes(p)),
    commands: facts.commands.filter((c) => !summary.includes(c)),
    exitCodes: facts.exitFacts.filter((e) => !summaryStatesExitFact(summary, e)).map(exitFactLabel),
    errorLines: facts.errorLines.filter((l) => !summary.includes(l)),
    images: facts.images.filter((l) => !summary.includes(l)),
  };
}

export function countMissing(missing: MissingFacts): number {
  return missing.paths.length + missing.commands.length + missing.exitCodes.length + missing.errorLines.length + missing.images.length;
}

export function countFacts(facts: BatchFacts): number {
  return facts.paths.length + facts.commands.length + facts.exitFacts.length + facts.errorLines.length + facts.images.length;
}

export interface FidelityScore {
  total: number;
  missing: number;
  /** kept / total, 1 when the batch has no facts. */
  ratio: number;
}

export function fidelityScore(batch: ToolBatch, summary: string): FidelityScore {
  const total = countFacts(batchFacts(batch));
  const missing = countMissing(findMissingFacts(batch, summary));
  return { total, missing, ratio: total === 0 ? 1 : (total - missing) / total };
}
