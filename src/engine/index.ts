/**
 * The engine, as its callers see it: `step` (step.ts) and the types it speaks, plus pure
 * queries and leaves that decide nothing about the session's state. The named transitions
 * (`session.ts`, `flush.ts`) are not exported: the live host and the replay drive the engine
 * only through `step` (`src/engine/entry-point.test.ts` holds every caller to that).
 */
export { effectOf, step, type EngineEffect, type EngineEvent, type StepOutput } from "./step.ts";
export { disciplineOn, flushesActive, initialEngineState, type EngineState } from "./session.ts";
export type { FlushResult, PersistEntry } from "./flush.ts";
