/**
 * The engine's one entry point: `step(state, event) → { state, render?, request?, effects }`.
 * The live host (`src/host/`) and the replay (`src/report/keeper-engine.ts`) drive the engine
 * only through it; the named transitions in `session.ts`, `flush.ts`, `send.ts` and
 * `restore.ts` are its internals.
 *
 * Events are what happened (a Pi event, or the result of an effect the caller performed);
 * effects are plain data the caller performs (run the summarizer, write spill files, append
 * entries, start a flush, show a notice). Async work stays with the caller: a flush is
 *
 *   flush-begin  → effect summarize (the batches and which go to the model)
 *   flush-plan   → effect write-spills (propose → decide → apply → entries; nothing adopted yet)
 *   flush-written (which spills failed) → state adopts the plan; effect append (entries, in order)
 *
 * After a flush is adopted the host steps `render-ahead` with the context as it is now: the
 * render the next request will reuse (off the request path; it is also the status line's figure).
 *
 * A cold re-plan is decided inside the `context` render: the state adopts it at once (the
 * render shows it) and keeps it in `replans`; `before-request` hands it out as a
 * `commit-replans` effect (spills, then `replans-written`, then append) — never from inside
 * the render.
 */
import { compactionStopsWarming } from "../compaction/cooperation.ts";
import { warmingOverride, type WarmingDecisionFields } from "../discipline/cold-cache.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import type { CaptureResult } from "../flush/capture.ts";
import { withoutFailedSpills, type SpillFailure, type SpillWrite } from "../recall/recall-index.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import { withoutSpillFailures, type FlushResult, type PersistEntry } from "./flush.ts";
import { restoredState, restoreNotice, type RestoreInput } from "./restore.ts";
import { sendRequest, type SendInput } from "./send.ts";
import {
  adoptFlush,
  compacted,
  completeFlush,
  observeUsage,
  sentTokensOf,
  outsideContextDropped,
  render,
  renderAheadOfPrompt,
  startFlush,
  type CompleteFlushInput,
  type EngineState,
  type FlushTrigger,
  type RenderInput,
  type StartFlushInput,
} from "./session.ts";
import { summaryRoutes, type RequestFacts } from "./summary-choice.ts";
import { budgetStep, closesRequest, loopFlushDue, loopFlushRemoves, loopMarkOf } from "./triggers.ts";
import type { DisciplineFacts } from "./decide.ts";
import type { ToolBatch } from "../summarize/batch.ts";
import { wireLogOnRewrite, wireLogOnWarming } from "./wire-log.ts";
import { nearerRewrite } from "./cache-ledger.ts";
import type { PartFault } from "./render.ts";
import { faultNotice } from "../ui/fault-text.ts";
import { outlookOf } from "./compaction/job.ts";
import { compactionStep, type CompactionStepOutput } from "./compaction/step.ts";
import type { CompactionEffect, CompactionEvent } from "./compaction/types.ts";

export type NoticeLevel = "info" | "warning" | "error";

/** What happened: a Pi event, or the outcome of an effect the caller performed. */
export type EngineEvent =
  /** `context`: render the request (after a cold re-plan when the cache is already lost). */
  | ({ type: "context" } & RenderInput)
  /** A flush was adopted: render the context now as the next request will see it, and remember it for that request. */
  | { type: "render-ahead"; settings: KeeperSettings; model: RenderInput["model"]; messages: ContextMessage[] }
  /** `before_provider_request`: the payload about to go out (cache ledger, seam, fingerprints). */
  | ({ type: "before-request" } & SendInput)
  /** `before_provider_request`, after the cache's step: the request is built, the cold re-plans its render adopted may be committed. */
  | { type: "request-built" }
  /** `message_end`: the provider's usage of the answer (unannounced cache losses). */
  | { type: "usage"; message: ContextMessage }
  /** `message_end`: an answer that closes the user's request starts a flush. */
  | { type: "message-end"; settings: KeeperSettings; message: ContextMessage }
  /**
   * `turn_end`: the budget trigger over the context's size, cooperating with async compaction (its
   * state's outlook); else the in-loop trigger over the branch (`context`, read only when it is
   * on) and the cache facts now (`facts`: the session model's prices and rule; absent: Anthropic's).
   */
  | { type: "turn-end"; settings: KeeperSettings; contextTokens: number; contextWindow: number; context?: () => ContextMessage[]; facts?: () => DisciplineFacts }
  /** `session_compact`: drop state outside the context; the next request is cold. */
  | { type: "compacted"; context: readonly ContextMessage[] }
  /** Session start, `/tree`, `/keeper on`: the state read back from the branch. */
  | ({ type: "restored" } & RestoreInput)
  /**
   * The replay of a keeper recording: the keeper state its entries show at this request (rebuilt
   * by the report before each request) and the render of it the request carried (the seam is
   * placed on it, as the `context` step's render is live).
   */
  | { type: "recorded-state"; keeper: KeeperState; render?: { raw: readonly ContextMessage[]; rendered: readonly ContextMessage[] } }
  /** `session_shutdown`: what is still waiting to be committed. */
  | { type: "shutdown" }
  /** `cache_warming_decision`: Pi is about to pay to keep the prefix warm (the cache's vote: a waiting rewrite). */
  | { type: "warming"; settings: KeeperSettings; decision: WarmingDecisionFields }
  /** `cache_warming_decision`, async compaction's vote: a job about to apply discards the warmed prefix too. */
  | { type: "compaction-warming"; decision: WarmingDecisionFields }
  /** A flush starts: capture the finished batches once; `summaryFacts` (the requests so far) price `auto`'s routes. */
  /** `trigger` "loop": a flush inside a running loop summarizes extractively (no model call, the loop goes on at once). */
  | ({ type: "flush-begin"; summaryFacts?: RequestFacts; cached?: (batch: ToolBatch) => boolean; trigger?: FlushTrigger } & StartFlushInput)
  /** The summaries are in: plan against the context as it is now (capture reused if still live). */
  | ({ type: "flush-plan" } & Omit<CompleteFlushInput, "capture" | "removes">)
  /** The plan's spill files were written (`failed`: those that were not): adopt, then append; `report`: what the flush did, for `/keeper`. */
  | { type: "flush-written"; result: FlushResult; failed: readonly SpillFailure[]; contextTokens: number | undefined; report?: { trigger: FlushTrigger; batches: number; durationMs: number } }
  /** The cold re-plans' spill files were written (the state adopted them at the render): append. */
  | { type: "replans-written"; results: readonly FlushResult[]; failed: readonly SpillFailure[] }
  /**
   * Something worth telling the user once per session runtime (`key`: what makes two notices
   * the same; default the text); `problem`: also listed under `/keeper`'s "saved state".
   */
  | { type: "notice"; text: string; level: NoticeLevel; key?: string; problem?: string }
  /** Async compaction's events (`compaction/types.ts`). */
  | CompactionEvent;

/** What the caller performs, in order. */
export type EngineEffect =
  /** Summarize these batches (`routes[i]`: batch i goes to the model summarizer), then step `flush-plan` with the summaries. */
  | { kind: "summarize"; capture: CaptureResult; routes: boolean[] }
  /** Write these spill files, then step `flush-written`. */
  | { kind: "write-spills"; result: FlushResult; spills: readonly SpillWrite[] }
  /** Write the spill files of these cold re-plans, then step `replans-written`. */
  | { kind: "commit-replans"; results: readonly FlushResult[] }
  /** Append these custom entries, in order. */
  | { kind: "append"; entries: readonly PersistEntry[] }
  /** Start a flush (the host queues it: flushes never overlap). */
  | { kind: "flush"; trigger: "request-end" | "budget" | "loop"; closingMessage?: ContextMessage }
  /** Tell the user. */
  | { kind: "notify"; text: string; level: NoticeLevel }
  /** Async compaction's effects (`compaction/types.ts`; its `append` is the one above). */
  | Exclude<CompactionEffect, { kind: "append" }>;

export interface StepOutput {
  state: EngineState;
  /** `context`: the messages to send (the very input array when nothing is due); `render-ahead`: the render of the context given. */
  render?: ContextMessage[];
  /** `before-request`: the body to send (undefined: keep the payload) and the seam's message index. */
  request?: { body: WireRequestBody | undefined; seam: number };
  /** `warming`: Pi's "warm" turned into "stop" (undefined: Pi decides). */
  warming?: "stop";
  /** Async compaction's answer to Pi: a `turn_end` draft, or `session_before_compact`'s result. */
  result?: CompactionStepOutput["result"];
  /** `session_before_compact` waits for the pending job (see `CompactionStepOutput`). */
  wait?: CompactionStepOutput["wait"];
  effects: EngineEffect[];
}

const none = (state: EngineState): StepOutput => ({ state, effects: [] });
const commit = (results: readonly FlushResult[]): EngineEffect[] => (results.length > 0 ? [{ kind: "commit-replans", results }] : []);

/** The one transition: both the live host and the replay drive the engine through it. */
export function step(state: EngineState, event: EngineEvent): StepOutput {
  switch (event.type) {
    case "context": {
      const faults: PartFault[] = [];
      const out = render(state, { ...event, faults });
      if (!out.persist) return reportFaults({ state: out.state, render: out.rendered, effects: [] }, faults, "context");
      const wire = out.persist.rewrote ? wireLogOnRewrite(out.state.wire) : out.state.wire;
      return reportFaults({ state: { ...out.state, wire, replans: [...out.state.replans, out.persist] }, render: out.rendered, effects: [] }, faults, "context");
    }
    case "render-ahead": {
      const faults: PartFault[] = [];
      const out = renderAheadOfPrompt(state, { ...event, faults });
      return reportFaults({ state: out.state, render: out.rendered, effects: [] }, faults, "a flush's render ahead");
    }
    case "before-request": {
      const out = sendRequest(state, event);
      return { state: out.state, request: { body: out.body, seam: out.seam }, effects: [] };
    }
    case "request-built":
    case "shutdown":
      return { state: state.replans.length > 0 ? { ...state, replans: [] } : state, effects: commit(state.replans) };
    case "usage":
      return none(observeUsage(state, event.message));
    case "message-end":
      if (!event.settings.enabled || !closesRequest(event.message)) return none(state);
      return { state, effects: [{ kind: "flush", trigger: "request-end", closingMessage: event.message }] };
    case "turn-end":
      return turnEnd(state, event);
    case "compacted":
      return none({ ...compacted(state, event.context), budget: { ...state.budget, tokensAtLastFlush: 0 } });
    case "restored": {
      const out = restoredState(state, event);
      return { state: out.state, effects: out.problems.length > 0 ? [{ kind: "notify", text: restoreNotice(out.problems), level: "warning" }] : [] };
    }
    case "recorded-state": {
      const next = event.keeper === state.keeper ? state : { ...state, keeper: event.keeper };
      return none(event.render ? { ...next, lastRender: { ...event.render, state: event.keeper } } : next);
    }
    case "warming": {
      const s = event.settings;
      if (!s.enabled || event.decision.action !== "warm") return none(state);
      // A rewrite applied but not sent yet, or held back: only the cached part before it is worth warming.
      const stop = s.cache.discipline && warmingOverride({ event: event.decision, pendingRewrite: nearerRewrite(state.ledger.pending, state.ledger.unsent) }) !== undefined;
      const next = { ...state, wire: wireLogOnWarming(state.wire, stop ? "rewrite" : undefined) };
      return stop ? { state: next, warming: "stop", effects: [] } : none(next);
    }
    case "compaction-warming":
      return compactionStopsWarming(outlookOf(state.compaction), event.decision.action) ? { state: { ...state, wire: wireLogOnWarming(state.wire, "compaction", false) }, warming: "stop", effects: [] } : none(state);
    case "flush-begin": {
      const out = startFlush(state, event);
      const loop = event.trigger === "loop";
      const routes = loop
        ? out.capture.batches.map(() => false)
        : summaryRoutes({ settings: event.settings, batches: out.capture.batches, requestFacts: event.summaryFacts, ...(event.cached ? { cached: event.cached } : {}) });
      // An in-loop flush forecasts the compaction from the context it leaves (`compactionAfterFlush`).
      const removes = loop ? loopFlushRemoves({ settings: event.settings, messages: event.branchMessages, keeper: out.state.keeper }) : 0;
      return { state: { ...out.state, flushing: { capture: out.capture, keeper: out.state.keeper, removes } }, effects: [{ kind: "summarize", capture: out.capture, routes }] };
    }
    case "flush-plan": {
      // A compaction may have applied while the summarizer ran: plan against the context now.
      const now = outsideContextDropped(state, event.branchMessages);
      const begun = state.flushing;
      const live = begun && begun.keeper === now.keeper ? begun : undefined;
      const faults: PartFault[] = [];
      const { result } = completeFlush(now, { ...event, faults, ...(live ? { capture: live.capture, removes: live.removes } : {}) });
      return reportFaults({ state: { ...now, flushing: undefined }, effects: [{ kind: "write-spills", result, spills: result.spills }] }, faults, "a flush");
    }
    case "flush-written": {
      const result = withoutSpillFailures(event.result, event.failed);
      const adopted = adoptFlush(state, result);
      const budget = event.contextTokens === undefined ? adopted.budget : { ...adopted.budget, tokensAtLastFlush: event.contextTokens };
      const wire = result.rewrote ? wireLogOnRewrite(adopted.wire) : adopted.wire;
      const r = event.report;
      const tokensSaved = adopted.keeper.stats.tokensSavedEstimate - state.keeper.stats.tokensSavedEstimate;
      const lastFlush = r ? { ...r, decisions: result.decisions, persistedEntries: result.plan.entriesToPersist.length, tokensSaved } : adopted.lastFlush;
      return { state: { ...adopted, budget, wire, lastFlush }, effects: [{ kind: "append", entries: result.entries }] };
    }
    case "replans-written": {
      const next = event.failed.length === 0 ? state : { ...state, recall: withoutFailedSpills(state.recall, event.failed) };
      const effects: EngineEffect[] = event.results.map((r) => ({ kind: "append", entries: withoutSpillFailures(r, event.failed).entries }));
      return { state: next, effects };
    }
    case "notice": {
      const key = event.key ?? event.text;
      if (state.shown.includes(key)) return none(state);
      const problems = event.problem ? [...state.problems, event.problem] : state.problems;
      return { state: { ...state, shown: [...state.shown, key], problems }, effects: [{ kind: "notify", text: event.text, level: event.level }] };
    }
    default:
      return compactionStep(state, event);
  }
}

/**
 * `turn_end`: the budget trigger first (held with it while async compaction is about to apply);
 * else the in-loop trigger. Either marks the loop's step, for the in-loop trigger's spacing.
 */
function turnEnd(state: EngineState, event: Extract<EngineEvent, { type: "turn-end" }>): StepOutput {
  const settings = event.settings;
  if (!settings.enabled) return none(state);
  const outlook = outlookOf(state.compaction);
  const out = budgetStep({ settings, contextTokens: event.contextTokens, contextWindow: event.contextWindow, base: state.budget, compaction: outlook });
  let next = out.base === state.budget ? state : { ...state, budget: out.base };
  const loopOn = settings.pruning.enabled && settings.pruning.loopFlush.enabled && event.context !== undefined;
  // A compaction foreseen from the context now may not be one from the context the in-loop flush
  // would leave: that trigger re-checks the hold after its candidates (`compactionAfterFlush`).
  if ((out.held && out.why !== "compaction_imminent") || !loopOn) return { state: next, effects: out.fire ? [{ kind: "flush", trigger: "budget" }] : [] };
  const messages = event.context!();
  const mark = loopMarkOf(messages);
  if (out.fire) return { state: mark ? { ...next, loopFlush: mark } : next, effects: [{ kind: "flush", trigger: "budget" }] };
  const compaction = { outlook, contextTokens: event.contextTokens };
  const due = loopFlushDue({ settings, messages, keeper: state.keeper, sentTokens: sentTokensOf(state, messages), facts: event.facts?.(), last: state.loopFlush, compaction });
  if (!due.fire || !mark) return { state: next, effects: [] };
  next = { ...next, loopFlush: mark };
  return { state: next, effects: [{ kind: "flush", trigger: "loop" }] };
}

/** A part that threw inside a step (the step went on without it): told once per part, as the host tells its own. */
function reportFaults(out: StepOutput, faults: readonly PartFault[], where: string): StepOutput {
  let state = out.state;
  const effects = [...out.effects];
  for (const f of faults) {
    const key = `fault:${f.part}`;
    if (state.shown.includes(key)) continue;
    state = { ...state, shown: [...state.shown, key] };
    effects.push({ kind: "notify", text: faultNotice(f.part, where, f.error), level: "warning" });
  }
  return faults.length === 0 ? out : { ...out, state, effects };
}

/** The one effect of `kind` a step must give (a flush's summarize, write-spills). */
export function effectOf<K extends EngineEffect["kind"]>(out: StepOutput, kind: K): Extract<EngineEffect, { kind: K }> {
  const found = out.effects.find((e): e is Extract<EngineEffect, { kind: K }> => e.kind === kind);
  if (!found) throw new Error(`context-keeper: the engine gave no ${kind} effect`);
  return found;
}

