/**
 * Effect: commit the cold re-plans a render decided (the engine's `context` step gave them as
 * `write-spills` effects, `when: "after-request"`), once
 * the request is built (`before_provider_request`) — as a flush commits: spill files first,
 * then the entries, so no stub points at a side file that was never written.
 *
 * A spill is a second copy (the original stays in the session file): a side file that cannot
 * be written is warned about once per session, and the re-plan commits without it (its recall
 * entry keeps the hash and size, not the spill path).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { step, type FlushResult } from "../engine/index.ts";
import type { SpillFailure } from "../recall/recall-index.ts";
import { appendEntries } from "./flush-job.ts";
import type { HostMemory } from "./host-types.ts";

export interface ColdReplanCommit {
  pi: Pick<ExtensionAPI, "appendEntry">;
  memory: HostMemory;
  /** The re-plans waiting, in the order the renders decided them. */
  waiting: readonly FlushResult[];
  write: (path: string, text: string) => Promise<void>;
  warn: (text: string) => void;
}

/** Appends at once when nothing needs a side file; otherwise a promise that writes, then appends. */
export function commitColdReplans(input: ColdReplanCommit): Promise<void> | undefined {
  const commit = (failed: readonly SpillFailure[]) => {
    const out = step(input.memory.engine, { type: "replans-written", results: input.waiting, failed });
    input.memory.engine = out.state;
    appendEntries(input.pi, out.effects);
  };
  if (input.waiting.every((r) => r.spills.length === 0)) {
    commit([]);
    return undefined;
  }
  return (async () => {
    const failed = new Map<string, string>();
    for (const r of input.waiting) {
      for (const s of r.spills) {
        if (failed.has(s.path)) continue;
        try {
          await input.write(s.path, s.text);
        } catch (error) {
          failed.set(s.path, error instanceof Error ? error.message : String(error));
        }
      }
    }
    if (failed.size > 0 && !input.memory.notices.has(SPILL_NOTICE)) {
      input.memory.notices.add(SPILL_NOTICE);
      const [first] = failed.values();
      input.warn(
        `context-keeper: could not write ${failed.size} spill file(s) (${first}); pruned anyway — ` +
          "those originals are recalled from the session file, not from a side file",
      );
    }
    commit([...failed].map(([path, error]) => ({ path, error })));
  })();
}

/** The key a flush's spill warning shares, so a session sees one warning whichever path failed. */
export const SPILL_NOTICE = "spill-write-failed";
