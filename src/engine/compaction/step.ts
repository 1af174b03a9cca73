/**
 * Async compaction's step: one `CompactionEvent` over the engine's state, its compaction slice
 * changed and the effects the host performs returned (with Pi's answer for `turn_end` and
 * `session_before_compact`, or the wait the latter asks for). Every hook but a timer's and a
 * run's end passes the activity gate first (an inactive context stands the job down); every
 * step ends with the status line in step with the job.
 */
import type { ContextMessage } from "../../session/messages.ts";
import { keeperRender } from "../render.ts";
import type { EngineState } from "../session.ts";
import { beforeCompact, compacted, compactFailed, type BeforeCompactAnswer, type WaitRequest } from "./before-compact.ts";
import { agentEnd, settled, settleTick, upgradeWritten } from "./idle-apply.ts";
import { dispatch, emit, endLateRun, enter, JOB_TIMER, lateTimer, SETTLE_TIMER, syncStatus, type StepContext } from "./job.ts";
import { confirmDraft, requestFailed } from "./ready.ts";
import { modelSelected, sessionShutdown, sessionStart, thinkingSelected, treeMoved } from "./session.ts";
import { COLD_TIMER, coldTick } from "./need.ts";
import { compactNow, started, turnEnd, type TurnEndDraft } from "./turn-end.ts";
import type { CompactionEffect, CompactionEvent, CompactionLive, SentContext } from "./types.ts";

export interface CompactionStepOutput {
  state: EngineState;
  effects: CompactionEffect[];
  /** Pi's answer: a `turn_end` draft, or `session_before_compact`'s result. */
  result?: TurnEndDraft | BeforeCompactAnswer;
  /** `session_before_compact` waits for the pending job: the host steps the hook again with how the wait ended. */
  wait?: WaitRequest;
}

/** The keeper's render of the messages, when the keeper runs beside async compaction. */
function sentContextOf(state: EngineState, live: CompactionLive | undefined): SentContext {
  const render = live?.keeperRender;
  if (!render) return live?.sentContext;
  return (messages) => (render.settings.enabled ? (keeperRender({ messages: messages as ContextMessage[], state: state.keeper, settings: render.settings, model: render.model }) as typeof messages) : messages);
}

export function compactionStep(state: EngineState, event: CompactionEvent): CompactionStepOutput {
  const live = "live" in event ? event.live : undefined;
  const lastRequestAt = state.ledger.lastKey?.at;
  const cx: StepContext = { state: state.compaction, effects: [], setup: event.setup, sent: sentContextOf(state, live), ...(lastRequestAt !== undefined ? { lastRequestAt } : {}) };
  const out: Omit<CompactionStepOutput, "state" | "effects"> = {};
  const hook = HOOKS[event.type as HookType] as ((cx: StepContext, e: CompactionEvent) => Out | void) | undefined;
  if (hook) {
    // A Pi hook: the activity gate first (an inactive context stands the job down).
    const e = event as Extract<CompactionEvent, { type: HookType }>;
    if (enter(cx, e.live)) Object.assign(out, hook(cx, e) ?? {});
    else if (e.type === "compaction-command") cx.effects.push({ kind: "say", text: `${e.setup.adapter.label}: disabled`, level: "info" });
  } else {
    switch (event.type) {
      case "compaction-shutdown":
        sessionShutdown(cx, event.live, event.inFlight ?? {});
        break;
      case "compaction-before-compact":
        // The wait it asked for ended: the same hook goes on (the gate was passed before it).
        if (event.waited !== undefined) Object.assign(out, answerOf(beforeCompact(cx, event.live, event)));
        else if (enter(cx, event.live)) {
          confirmDraft(cx, event.live);
          Object.assign(out, answerOf(beforeCompact(cx, event.live, event)));
        }
        break;
      case "compaction-started":
        started(cx, event.job, event.request);
        break;
      case "compaction-settled":
        settled(cx, event.live, { jobId: event.jobId, now: event.now, ...(event.result ? { result: event.result } : {}), ...(event.error !== undefined ? { error: event.error } : {}), ...(event.spend ? { spend: event.spend } : {}) });
        break;
      case "compaction-timer":
        timerFired(cx, event.live, event.key);
        break;
      case "compaction-request-failed":
        requestFailed(cx, event);
        break;
      case "compaction-upgrade-written":
        upgradeWritten(cx, event.jobId, event.error);
        break;
    }
  }
  syncStatus(cx);
  return { state: { ...state, compaction: cx.state }, effects: cx.effects, ...out };
}

type Out = Omit<CompactionStepOutput, "state" | "effects">;

/** The hooks that pass the activity gate and then do one thing. */
const HOOKS = {
  "compaction-session-start": (cx, e) => sessionStart(cx, e.live),
  "compaction-turn-end": (cx, e) => ({ result: turnEnd(cx, e.live, e) }),
  "compaction-agent-end": (cx, e) => agentEnd(cx, e.live),
  "compaction-model-select": (cx, e) => modelSelected(cx, e.modelKey),
  "compaction-thinking-select": (cx, e) => thinkingSelected(cx, e.level),
  "compaction-tree": (cx, e) => treeMoved(cx, e.live),
  "compaction-compacted": (cx, e) => compacted(cx, e),
  "compaction-compact-failed": (cx, e) => compactFailed(cx, e),
  "compaction-command": (cx, e) => compactNow(cx, e.live),
} satisfies { [T in HookType]: (cx: StepContext, e: Extract<CompactionEvent, { type: T }>) => Out | void };

type HookType =
  | "compaction-session-start"
  | "compaction-turn-end"
  | "compaction-agent-end"
  | "compaction-model-select"
  | "compaction-thinking-select"
  | "compaction-tree"
  | "compaction-compacted"
  | "compaction-compact-failed"
  | "compaction-command";

const answerOf = (a: { answer: BeforeCompactAnswer; wait?: WaitRequest }): Out => ({ result: a.answer, ...(a.wait ? { wait: a.wait } : {}) });

function timerFired(cx: StepContext, live: CompactionLive, key: string): void {
  if (key === SETTLE_TIMER) return settleTick(cx, live);
  if (key === COLD_TIMER) return coldTick(cx, live);
  if (key === JOB_TIMER) {
    const running = cx.state.running;
    if (running !== undefined) dispatch(cx, { type: "timeout", jobId: running });
    return;
  }
  for (const jobId of Object.keys(cx.state.late)) {
    if (key !== lateTimer(jobId)) continue;
    endLateRun(cx, jobId, { abort: true });
    emit(cx, { kind: "diagnostic", message: `late job ${jobId} timed out; its digest stays` });
  }
}
