/** A pure query for callers: async compaction's outlook (`cooperation.ts`) from the engine's state. */
import type { CompactionOutlook } from "../../compaction/cooperation.ts";
import type { EngineState } from "../session.ts";
import { outlookOf } from "./job.ts";

export function compactionOutlookOf(state: EngineState): CompactionOutlook {
  return outlookOf(state.compaction);
}
