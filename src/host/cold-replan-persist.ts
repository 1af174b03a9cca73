/**
 * Effect: commit the cold re-plans a render adopted (the engine hands them out at
 * `before-request` as a `commit-replans` effect, once the request is built) — as a flush
 * commits: spill files first, then the entries, so no stub points at a side file that was
 * never written.
 *
 * A spill is a second copy (the original stays in the session file): a side file that cannot
 * be written is warned about once per session, and the re-plan commits without it (its recall
 * entry keeps the hash and size, not the spill path).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { EngineEffect, FlushResult } from "../engine/index.ts";
import type { SpillFailure } from "../recall/recall-index.ts";
import type { EngineCell } from "./engine-cell.ts";
import { appendEntries, spillNotice } from "./flush-job.ts";

export interface ColdReplanCommit {
  pi: Pick<ExtensionAPI, "appendEntry">;
  cell: EngineCell;
  /** The re-plans waiting, in the order the renders decided them. */
  results: readonly FlushResult[];
  write: (path: string, text: string) => Promise<void>;
  /** Perform the engine's notify effects (the spill warning). */
  perform: (effects: readonly EngineEffect[]) => void;
}

/** Appends at once when nothing needs a side file; otherwise a promise that writes, then appends. */
export function commitColdReplans(input: ColdReplanCommit): Promise<void> | undefined {
  const commit = (failed: readonly SpillFailure[]) => appendEntries(input.pi, input.cell.step({ type: "replans-written", results: input.results, failed }).effects);
  if (input.results.every((r) => r.spills.length === 0)) {
    commit([]);
    return undefined;
  }
  return (async () => {
    const failed = new Map<string, string>();
    for (const r of input.results) {
      for (const s of r.spills) {
        if (failed.has(s.path)) continue;
        try {
          await input.write(s.path, s.text);
        } catch (error) {
          failed.set(s.path, error instanceof Error ? error.message : String(error));
        }
      }
    }
    const failures = [...failed].map(([path, error]) => ({ path, error }));
    if (failures.length > 0) input.perform(input.cell.step(spillNotice(failures, false)).effects);
    commit(failures);
  })();
}
