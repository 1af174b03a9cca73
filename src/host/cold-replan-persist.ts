/**
 * Effect: commit the cold re-plans a render decided (`render` in `src/engine/session.ts`), once
 * the request is built (`before_provider_request`) — as a flush commits: spill files first,
 * then the entries, so no stub points at a side file that was never written.
 *
 * A spill is a second copy (the original stays in the session file): a side file that cannot
 * be written is warned about once per session, and the re-plan commits without it (its recall
 * entry keeps the hash and size, not the spill path).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { type FlushResult, withoutSpillFailures } from "../engine/flush.ts";
import { type SpillFailure, withoutFailedSpills } from "../recall/recall-index.ts";
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
  const append = (results: readonly FlushResult[]) => {
    for (const r of results) for (const e of r.entries) input.pi.appendEntry(e.customType, e.data);
  };
  if (input.waiting.every((r) => r.spills.length === 0)) {
    append(input.waiting);
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
    const failures: SpillFailure[] = [...failed].map(([path, error]) => ({ path, error }));
    if (failures.length > 0) {
      input.memory.engine = { ...input.memory.engine, recall: withoutFailedSpills(input.memory.engine.recall, failures) };
      if (!input.memory.notices.has(SPILL_NOTICE)) {
        input.memory.notices.add(SPILL_NOTICE);
        const [first] = failed.values();
        input.warn(
          `context-keeper: could not write ${failed.size} spill file(s) (${first}); pruned anyway — ` +
            "those originals are recalled from the session file, not from a side file",
        );
      }
    }
    append(input.waiting.map((r) => withoutSpillFailures(r, failures)));
  })();
}

/** The key a flush's spill warning shares, so a session sees one warning whichever path failed. */
export const SPILL_NOTICE = "spill-write-failed";
