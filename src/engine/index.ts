/**
 * The engine, as its callers see it: `step` (step.ts) and the types it speaks, plus pure
 * queries that decide nothing about the session's state (a render of a given state, the
 * budget rule, the in-loop rule, the thinking policy, the configs the leaves read, the cache facts, the summary
 * routes). Every other module under `src/engine/` is internal: the live host, the replay, the
 * fuzzer and the benches import values from this file only (`src/engine/entry-point.test.ts`
 * holds every caller to that).
 */
export { effectOf, step, type EngineEffect, type EngineEvent, type StepOutput } from "./step.ts";
export { disciplineOn, flushesActive, initialEngineState, type EngineState } from "./session.ts";
export type { FlushResult, PersistEntry } from "./flush.ts";
export { keeperRender, type KeeperRenderInput } from "./render.ts";
export { budgetTriggerFires, loopFlushDue, loopMarkOf, type BudgetTriggerInput, type LoopFlushMark } from "./triggers.ts";
export { pruneConfigFrom, thinkingPolicyFor, type ModelIdentityInput } from "./config.ts";
export { cacheFacts, coldVerdictOf, ledgerFromBranch, type CacheLedger } from "./cache-ledger.ts";
export type { CacheSettings, DisciplineFacts } from "./decide.ts";
export { cacheViewOf, type CacheRuleFacts } from "./wire-log.ts";
export type { FlushReport, FlushTrigger } from "./session.ts";
export { expectedRequestsOf, summaryRoutes, type RequestFacts } from "./summary-choice.ts";
export { compactionOutlookOf } from "./compaction/job.ts";
export type { CompactionEffect, CompactionEvent, CompactionLive, CompactionSetup, CompactionState, StartRequest } from "./compaction/types.ts";
