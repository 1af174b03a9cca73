/**
 * Pi's exported compaction/session helpers, passed in rather than imported, so that the
 * preparation and preview code stays pure and can be driven by tests with Pi's real
 * functions or with stand-ins. `src/host/compaction-runtime.ts` binds the real ones.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
  CompactionResult,
  FileOperations,
  SessionBeforeCompactEvent,
  SessionEntry,
  SessionProjection,
} from "@earendil-works/pi-coding-agent";

export type { AgentMessage, CompactionResult, FileOperations, SessionEntry, SessionProjection };

/** Pi's `CompactionPreparation` (not exported by name; taken from the hook's event type). */
export type CompactionPreparation = SessionBeforeCompactEvent["preparation"];
export type CompactionSettings = CompactionPreparation["settings"];

export interface PiCompactionPrimitives {
  buildSessionProjection(entries: SessionEntry[], leafId?: string | null): SessionProjection;
  sessionEntryToContextMessages(entry: SessionEntry): AgentMessage[];
  estimateTokens(message: AgentMessage): number;
  /** pi-ai's `getCurrentSystemMessage`: the merged system prompt state of a transcript. */
  getCurrentSystemMessage(messages: AgentMessage[]): AgentMessage | undefined;
}
