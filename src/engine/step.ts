/**
 * The engine's one entry point: `step(state, event) → { state, render?, request?, effects }`.
 * The live host (`src/host/`) and the replay (`src/report/keeper-engine.ts`) drive the engine
 * only through it; the named transitions in `session.ts` and `flush.ts` are its internals.
 *
 * Events are what happened (a Pi event, or the result of an effect the caller performed);
 * effects are plain data the caller performs (run the summarizer, write spill files, append
 * entries, start a flush). Async work stays with the caller: a flush is
 *
 *   flush-begin  → effect summarize (the caller summarizes the captured batches)
 *   flush-plan   → effect write-spills (propose → decide → apply → entries; nothing adopted yet)
 *   flush-written (which spills failed) → state adopts the plan; effect append (entries, in order)
 *
 * After a flush is adopted the host steps `render-ahead` with the context as it is now: the
 * render the next request will reuse (off the request path; it is also the status line's figure).
 *
 * A cold re-plan is decided inside the `context` render: the state adopts it at once (the
 * render shows it), and its spills and entries come back as an effect to perform once the
 * request is built (`replans-written`, then append) — never from inside the render.
 */
import type { CompactionOutlook } from "../compaction/cooperation.ts";
import type { CaptureResult } from "../flush/capture.ts";
import { withoutFailedSpills, type RecallIndex, type SpillFailure, type SpillWrite } from "../recall/recall-index.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import { ledgerExtended, type CacheLedger } from "./cache-ledger.ts";
import { withoutSpillFailures, type FlushResult, type PersistEntry } from "./flush.ts";
import {
  adoptFlush,
  compacted,
  completeFlush,
  observeUsage,
  outsideContextDropped,
  render,
  renderAheadOfPrompt,
  send,
  startFlush,
  type CompleteFlushInput,
  type EngineState,
  type RenderInput,
  type StartFlushInput,
} from "./session.ts";
import { budgetStep, closesRequest } from "./triggers.ts";

type SendInput = Parameters<typeof send>[1];

/** What happened: a Pi event, or the outcome of an effect the caller performed. */
export type EngineEvent =
  /** `context`: render the request (after a cold re-plan when the cache is already lost). */
  | ({ type: "context" } & RenderInput)
  /** A flush was adopted: render the context now as the next request will see it, and remember it for that request. */
  | { type: "render-ahead"; settings: KeeperSettings; model: RenderInput["model"]; messages: ContextMessage[] }
  /** `before_provider_request`: the serialized request (cache ledger, seam). */
  | ({ type: "before-request" } & SendInput)
  /** The host's bust attribution of the request just sent: it read the previous prefix back whole (loss statistics). */
  | { type: "attributed"; extended: boolean }
  /** `message_end`: the provider's usage; an answer that closes the user's request starts a flush. */
  | { type: "message-end"; settings: KeeperSettings; message: ContextMessage }
  /** `turn_end`: the budget trigger over Pi's context usage, cooperating with async compaction. */
  | { type: "turn-end"; settings: KeeperSettings; contextTokens: number; contextWindow: number; compaction: CompactionOutlook | undefined }
  /** `session_compact`: drop state outside the context; the next request is cold. */
  | { type: "compacted"; context: readonly ContextMessage[] }
  /** Session start, `/tree`, `/keeper on`: the state restored from the branch. */
  | { type: "restored"; keeper: KeeperState; recall: RecallIndex; ledger: CacheLedger; contextTokens: number }
  /** A flush starts: capture the finished batches once. */
  | ({ type: "flush-begin" } & StartFlushInput)
  /** The summaries are in: plan against the context as it is now (capture reused if still live). */
  | ({ type: "flush-plan" } & Omit<CompleteFlushInput, "capture">)
  /** The plan's spill files were written (`failed`: those that were not): adopt, then append. */
  | { type: "flush-written"; result: FlushResult; failed: readonly SpillFailure[]; contextTokens: number | undefined }
  /** The cold re-plans' spill files were written (the state adopted them at the render): append. */
  | { type: "replans-written"; results: readonly FlushResult[]; failed: readonly SpillFailure[] };

/** What the caller performs, in order. */
export type EngineEffect =
  /** Summarize these batches, then step `flush-plan` with the summaries. */
  | { kind: "summarize"; capture: CaptureResult }
  /**
   * Write these spill files, then step `flush-written` (`when: "now"`) or, for a cold re-plan,
   * `replans-written` once the request is built (`when: "after-request"`).
   */
  | { kind: "write-spills"; when: "now" | "after-request"; result: FlushResult; spills: readonly SpillWrite[] }
  /** Append these custom entries, in order. */
  | { kind: "append"; entries: readonly PersistEntry[] }
  /** Start a flush (the host queues it: flushes never overlap). */
  | { kind: "flush"; trigger: "request-end" | "budget"; closingMessage?: ContextMessage };

export interface StepOutput {
  state: EngineState;
  /** `context`: the messages to send (the very input array when nothing is due); `render-ahead`: the render of the context given. */
  render?: ContextMessage[];
  /** `before-request`: the body to send (undefined: keep the payload) and the seam's message index. */
  request?: { body: SendInput["body"]; seam: number };
  effects: EngineEffect[];
}

const none = (state: EngineState): StepOutput => ({ state, effects: [] });

/** The one transition: both the live host and the replay drive the engine through it. */
export function step(state: EngineState, event: EngineEvent): StepOutput {
  switch (event.type) {
    case "context": {
      const out = render(state, event);
      const effects: EngineEffect[] = out.persist ? [{ kind: "write-spills", when: "after-request", result: out.persist, spills: out.persist.spills }] : [];
      return { state: out.state, render: out.rendered, effects };
    }
    case "render-ahead": {
      const out = renderAheadOfPrompt(state, event);
      return { state: out.state, render: out.rendered, effects: [] };
    }
    case "before-request": {
      const out = send(state, event);
      return { state: out.state, request: { body: out.body, seam: out.seam }, effects: [] };
    }
    case "attributed": {
      const ledger = ledgerExtended(state.ledger, event.extended);
      return none(ledger === state.ledger ? state : { ...state, ledger });
    }
    case "message-end": {
      if (!event.settings.enabled) return none(state);
      const next = observeUsage(state, event.message);
      return { state: next, effects: closesRequest(event.message) ? [{ kind: "flush", trigger: "request-end", closingMessage: event.message }] : [] };
    }
    case "turn-end": {
      if (!event.settings.enabled) return none(state);
      const out = budgetStep({ settings: event.settings, contextTokens: event.contextTokens, contextWindow: event.contextWindow, base: state.budget, compaction: event.compaction });
      const next = out.base === state.budget ? state : { ...state, budget: out.base };
      return { state: next, effects: out.fire ? [{ kind: "flush", trigger: "budget" }] : [] };
    }
    case "compacted":
      return none({ ...compacted(state, event.context), budget: { ...state.budget, tokensAtLastFlush: 0 } });
    case "restored":
      return none({
        ...state,
        keeper: event.keeper,
        recall: event.recall,
        ledger: event.ledger,
        lastRender: undefined,
        renderMemo: undefined,
        flushing: undefined,
        budget: { ...state.budget, tokensAtLastFlush: event.contextTokens },
      });
    case "flush-begin": {
      const out = startFlush(state, event);
      return { state: { ...out.state, flushing: { capture: out.capture, keeper: out.state.keeper } }, effects: [{ kind: "summarize", capture: out.capture }] };
    }
    case "flush-plan": {
      // A compaction may have applied while the summarizer ran: plan against the context now.
      const now = outsideContextDropped(state, event.branchMessages);
      const begun = state.flushing;
      const capture = begun && begun.keeper === now.keeper ? begun.capture : undefined;
      const { result } = completeFlush(now, { ...event, ...(capture ? { capture } : {}) });
      return { state: { ...now, flushing: undefined }, effects: [{ kind: "write-spills", when: "now", result, spills: result.spills }] };
    }
    case "flush-written": {
      const result = withoutSpillFailures(event.result, event.failed);
      const adopted = adoptFlush(state, result);
      const budget = event.contextTokens === undefined ? adopted.budget : { ...adopted.budget, tokensAtLastFlush: event.contextTokens };
      return { state: { ...adopted, budget }, effects: [{ kind: "append", entries: result.entries }] };
    }
    case "replans-written": {
      const next = event.failed.length === 0 ? state : { ...state, recall: withoutFailedSpills(state.recall, event.failed) };
      const effects: EngineEffect[] = event.results.map((r) => ({ kind: "append", entries: withoutSpillFailures(r, event.failed).entries }));
      return { state: next, effects };
    }
  }
}

/** The one effect of `kind` a step must give (a flush's summarize, write-spills). */
export function effectOf<K extends EngineEffect["kind"]>(out: StepOutput, kind: K): Extract<EngineEffect, { kind: K }> {
  const found = out.effects.find((e): e is Extract<EngineEffect, { kind: K }> => e.kind === kind);
  if (!found) throw new Error(`context-keeper: the engine gave no ${kind} effect`);
  return found;
}
