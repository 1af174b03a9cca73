/**
 * The render pipeline, run on every provider request (Pi's `context` hook):
 *
 *   stub-replace -> error-purge -> chain-compress -> thinking strip (injected) -> pairing sweep
 *
 * Pure over (messages, persisted state, config): no clock, no I/O. Every phase returns
 * its input array when it changes nothing, so a render with nothing due returns the very
 * array it was given. The current tool loop (after the last user message) is never
 * altered; an injected phase is held to that by `guardCurrentLoop`.
 */
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperState } from "../state/schema.ts";
import { chainCompress } from "./chain-compress.ts";
import type { PruneConfig } from "./config.ts";
import { errorPurge } from "./error-purge.ts";
import { currentLoopStart, pairToolCalls, type Pairing } from "./occurrence.ts";
import { pairingSweep } from "./pairing-sweep.ts";
import type { RenderPhase } from "./phase.ts";
import { stubReplace } from "./stub-replace.ts";

/** What the thinking strip gets from the persisted state. */
export interface ThinkingStripInput {
  /** The frontier's `thinkingStripBoundaryTimestamp`. */
  boundaryTimestamp: number | undefined;
  /** Whether a flush has been persisted on this branch (`flushSeq > 0`). */
  hasFlushed: boolean;
}

/**
 * The thinking strip, config bound by the caller, e.g.
 * `(m, t) => stripOldThinking(m, cfg, boundaryForRender({ persisted: t.boundaryTimestamp, hasFlushed: t.hasFlushed }))`.
 */
export type ThinkingStripPhase = (messages: ContextMessage[], input: ThinkingStripInput) => ContextMessage[];

export interface RenderPhases {
  thinkingStrip?: ThinkingStripPhase;
}

export interface RenderContextOptions {
  messages: ContextMessage[];
  state: KeeperState;
  config: PruneConfig;
  phases?: RenderPhases;
}

/**
 * Runs an outside phase but keeps the current tool loop exactly as it was (same message
 * objects). A phase that changes the array length is ignored: its output cannot be
 * lined up with the input safely.
 */
export function guardCurrentLoop(messages: ContextMessage[], output: ContextMessage[]): ContextMessage[] {
  if (output === messages) return messages;
  if (output.length !== messages.length) return messages;
  const loopStart = currentLoopStart(messages);
  let same = true;
  for (let i = 0; i < loopStart; i++) if (output[i] !== messages[i]) same = false;
  if (same) return messages;
  return [...output.slice(0, loopStart), ...messages.slice(loopStart)];
}

export const PRUNING_PHASES: readonly RenderPhase[] = [stubReplace, errorPurge, chainCompress];

/**
 * Phases that keep every message's position, role, timestamp and tool calls (ids, order): the
 * pairing of their input is the pairing of their output, so the render pairs once for them.
 */
const KEEPS_PAIRING: ReadonlySet<RenderPhase> = new Set([stubReplace, errorPurge]);

export function renderContext(options: RenderContextOptions): ContextMessage[] {
  const { state, config, phases } = options;
  let current = options.messages;
  let pairing: Pairing | undefined;
  if (config.enabled)
    for (const phase of PRUNING_PHASES) {
      pairing ??= pairToolCalls(current);
      const next = phase(current, { state, config, pairing });
      if (next !== current && !KEEPS_PAIRING.has(phase)) pairing = undefined;
      current = next;
    }
  if (phases?.thinkingStrip) {
    const input = current;
    const thinking: ThinkingStripInput = {
      boundaryTimestamp: state.frontier.thinkingStripBoundaryTimestamp,
      hasFlushed: state.frontier.flushSeq > 0,
    };
    current = guardCurrentLoop(input, phases.thinkingStrip(input, thinking));
    if (current !== input) pairing = undefined;
  }
  return pairingSweep(current, { state, config, ...(pairing ? { pairing } : {}) });
}
