/**
 * The one place that binds Pi's runtime helpers for the compaction subsystem (the host
 * side). Everything else receives these through `PiCompactionPrimitives` / options.
 */
import { getCurrentSystemMessage } from "@earendil-works/pi-ai";
import {
  buildSessionProjection,
  compact,
  estimateTokens,
  sessionEntryToContextMessages,
} from "@earendil-works/pi-coding-agent";
import type { AgentMessage, PiCompactionPrimitives } from "../compaction/primitives.ts";

export const piCompactionPrimitives: PiCompactionPrimitives = {
  buildSessionProjection: (entries, leafId) => buildSessionProjection(entries, leafId),
  sessionEntryToContextMessages,
  estimateTokens,
  getCurrentSystemMessage: (messages) =>
    getCurrentSystemMessage(messages as Parameters<typeof getCurrentSystemMessage>[0]) as AgentMessage | undefined,
};

export { compact as piCompact };
