/**
 * The one mutable cell that holds a session runtime's engine state. Every part the host runs
 * (the keeper's pruning, thinking, cache and UI steps, async compaction's) steps the engine
 * through it, so the parts share one state and the order of their steps is the order of the
 * events (hooks.ts says which part steps first).
 */
import { initialEngineState, step, type EngineEvent, type EngineState, type StepOutput } from "../engine/index.ts";

export interface EngineCell {
  get(): EngineState;
  /** Step the engine and keep the state it returns. */
  step(event: EngineEvent): StepOutput;
}

export function createEngineCell(initial: EngineState = initialEngineState()): EngineCell {
  let state = initial;
  return {
    get: () => state,
    step(event) {
      const out = step(state, event);
      state = out.state;
      return out;
    },
  };
}
