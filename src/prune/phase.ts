/** The shape every render phase shares. */
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperState } from "../state/schema.ts";
import type { PruneConfig } from "./config.ts";
import type { Pairing } from "./occurrence.ts";

export interface PhaseContext {
  state: KeeperState;
  config: PruneConfig;
  /** `pairToolCalls` of the messages the phase receives, when the caller has it (saves pairing again). */
  pairing?: Pairing;
}

/**
 * A pure render phase: never mutates its input, returns the same array reference when it
 * changes nothing, and never alters the current tool loop (see `currentLoopStart`).
 */
export type RenderPhase = (messages: ContextMessage[], ctx: PhaseContext) => ContextMessage[];
