/**
 * Async compaction's side of the host: the handles only — the adapter (its `prepare`, `run`,
 * `toCompaction`), the runs in flight with their aborts, the timers the engine set, the
 * `session_before_compact` waits, the last context seen — and its handler per Pi event, each
 * reading what the engine needs of the live session (`CompactionLive`), stepping the engine
 * (`src/engine/compaction/`) and performing the effects it returns: jobs prepared and run,
 * timers, `ctx.compact()`, appended entries, user messages, notices, the status line and the
 * lifecycle events. Each run gets a meter (`run-spend.ts`): what its summary calls cost goes to
 * the engine when it ends, or at shutdown for a run still in flight. `hooks.ts` maps each Pi event to these handlers.
 */
import type { ExtensionAPI, ExtensionContext, SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "../compaction/adapter.ts";
import { modelKeyOf, settingsKeyOf } from "../compaction/apply-gate.ts";
import { DEFAULT_STALL_MS, DEFAULT_START_RATIO, DEFAULT_TIMEOUT_MS, DEFAULT_WAIT_MS } from "../compaction/config.ts";
import type { JobSnapshot } from "../compaction/job-reducer.ts";
import type { LifecycleListener } from "../compaction/lifecycle.ts";
import { createRunSpendMeter, type RunSpend, type RunSpendMeter } from "../compaction/run-spend.ts";
import type { AsyncCompactionHandle, RegisterAsyncCompactionOptions, Timers } from "../compaction/register-options.ts";
import type { EngineEffect, EngineEvent, KeeperRenderInput, StepOutput } from "../engine/index.ts";
import { compactionOutlookOf, type CompactionLive, type CompactionSetup, type StartRequest } from "../engine/index.ts";
import { liveTtlMs } from "./cache-edge.ts";
import type { EngineCell } from "./engine-cell.ts";

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

type PiHandler = (event: never, ctx: ExtensionContext) => unknown;

/** Async compaction's handler per Pi event it listens to, and its command. */
export interface CompactionPart {
  handlers: Record<
    | "session_start"
    | "session_tree"
    | "session_compact"
    | "session_compact_failed"
    | "session_before_compact"
    | "session_shutdown"
    | "turn_end"
    | "agent_end"
    | "model_select"
    | "thinking_level_select"
    | "cache_warming_decision",
    PiHandler
  >;
  /** `/async-compact-now`. */
  command(ctx: ExtensionContext): Promise<void>;
  handle: AsyncCompactionHandle;
  /** Perform the engine's effects (a fault notice among them). */
  perform(effects: readonly EngineEffect[], ctx: ExtensionContext): void;
}

export interface CompactionHostOptions extends RegisterAsyncCompactionOptions {
  cell: EngineCell;
  adapter: AnyAsyncCompactionAdapter;
  pi: Pick<ExtensionAPI, "appendEntry" | "sendUserMessage" | "getThinkingLevel">;
  /** The keeper's render settings for this context, when the keeper runs beside compaction. */
  keeperRender?: (ctx: ExtensionContext) => Pick<KeeperRenderInput, "settings" | "model">;
}

/** Messages to the user: through the UI when there is one, on the console otherwise (print mode), as pi-async-compaction does. Never throws. */
export function say(ctx: ExtensionContext, message: string, type: "info" | "warning" | "error" = "info"): void {
  try {
    if (ctx.hasUI === false) console.log(message);
    else ctx.ui.notify(message, type);
  } catch {
    // The UI may be gone during teardown.
  }
}

interface Run {
  prepared: unknown;
  abort: AbortController;
  /** What the run's summary calls cost so far. */
  meter: RunSpendMeter;
  ctx: ExtensionContext;
  model: NonNullable<ExtensionContext["model"]>;
  thinkingLevel: string;
}

export function createCompactionHost(o: CompactionHostOptions): CompactionPart {
  const { cell, adapter, pi } = o;
  const config = o.config ?? { enabled: true, startRatio: DEFAULT_START_RATIO, timeoutMs: DEFAULT_TIMEOUT_MS };
  const setup: CompactionSetup = {
    adapter: { id: adapter.id, label: adapter.label },
    config,
    primitives: o.primitives,
    settle: o.settleRetry ?? { intervalMs: 25, attempts: 40 },
    persistReady: o.persistReady !== false,
    waitMs: config.waitMs ?? DEFAULT_WAIT_MS,
    stallMs: config.stallMs ?? DEFAULT_STALL_MS,
  };
  const timers = o.timers ?? realTimers;
  const now = o.now ?? Date.now;
  let counter = 0;
  const newJobId = o.newJobId ?? (() => `acj-${now().toString(36)}-${++counter}`);
  const isActive = o.isActive ?? (() => true);
  const listener: LifecycleListener | undefined = o.onLifecycleEvent;

  let lastCtx: ExtensionContext | undefined;
  const runs = new Map<string, Run>();
  const armed = new Map<string, unknown>();
  const waiters = new Map<string, () => void>();

  const live = (ctx: ExtensionContext): CompactionLive => {
    let active: boolean;
    try {
      active = isActive(ctx);
    } catch {
      active = false;
    }
    const render = o.keeperRender?.(ctx);
    const sent = o.sentContext;
    return {
      active,
      now: now(),
      get sessionId() {
        return ctx.sessionManager.getSessionId();
      },
      modelKey: modelKeyOf(ctx.model),
      model: ctx.model,
      get thinkingLevel() {
        return ctx.thinkingLevel ?? pi.getThinkingLevel();
      },
      idle: () => ctx.isIdle(),
      pendingMessages: () => ctx.hasPendingMessages(),
      get streaming() {
        return ctx.signal !== undefined;
      },
      branch: () => ctx.sessionManager.getBranch(),
      settings: () => o.getCompactionSettings(ctx),
      usage: () => ctx.getContextUsage() ?? undefined,
      get cacheTtlMs() {
        try {
          return liveTtlMs(ctx);
        } catch {
          return undefined; // a model without an API the cost model knows: the lifetime is unknown
        }
      },
      ...(render ? { keeperRender: render } : {}),
      ...(sent && !render ? { sentContext: (messages: Parameters<typeof sent>[0]) => sent(messages, ctx) } : {}),
    };
  };

  /** Step the engine and perform what it says; the output for the handler's answer. */
  const run = (event: EngineEvent, ctx: ExtensionContext | undefined): StepOutput => {
    const out = cell.step(event);
    perform(out.effects, ctx);
    return out;
  };

  const emit: LifecycleListener = (event) => {
    try {
      listener?.(event);
    } catch {
      // A listener must never break compaction.
    }
  };

  /** Remember the context of an active hook: background work reports through it. */
  const remember = (ctx: ExtensionContext, l: CompactionLive) => {
    if (l.active) lastCtx = ctx;
    return l;
  };

  const perform = (effects: readonly EngineEffect[], ctx: ExtensionContext | undefined): void => {
    for (const e of effects) {
      switch (e.kind) {
        case "compaction-start":
          start(e.request, ctx ?? lastCtx);
          break;
        case "compaction-run":
          runInBackground(e.jobId);
          break;
        case "compaction-abort":
          runs.get(e.jobId)?.abort.abort();
          break;
        case "timer-set": {
          const at = ctx ?? lastCtx;
          const previous = armed.get(e.key);
          if (previous !== undefined) timers.clearTimeout(previous);
          armed.set(
            e.key,
            timers.setTimeout(() => {
              armed.delete(e.key);
              if (at) run({ type: "compaction-timer", key: e.key, setup, live: live(at) }, at);
            }, e.ms),
          );
          break;
        }
        case "timer-clear": {
          const handle = armed.get(e.key);
          if (handle !== undefined) timers.clearTimeout(handle);
          armed.delete(e.key);
          break;
        }
        case "compaction-request": {
          const at = ctx ?? lastCtx;
          at?.compact({ onError: (error) => run({ type: "compaction-request-failed", setup, jobId: e.jobId, path: e.path, error: error.message }, at) });
          break;
        }
        case "compaction-upgrade": {
          let error: string | undefined;
          try {
            pi.appendEntry(e.customType, e.data);
          } catch (err) {
            error = err instanceof Error ? err.message : String(err);
          }
          run({ type: "compaction-upgrade-written", setup, jobId: e.jobId, ...(error !== undefined ? { error } : {}) }, ctx);
          break;
        }
        case "compaction-wake":
          waiters.get(e.jobId)?.();
          break;
        case "lifecycle":
          emit(e.event);
          break;
        case "status": {
          const at = lastCtx;
          try {
            at?.ui.setStatus(e.key, e.text);
          } catch {
            // UI may be gone during teardown.
          }
          break;
        }
        case "say": {
          const at = ctx ?? lastCtx;
          if (!at) break;
          // A message from `session_compact` is said on the next tick: Pi's interactive mode clears its chat
          // and renders the compacted session at `compaction_end`, right after the handlers return.
          if (e.later) timers.setTimeout(() => say(at, e.text, e.level), 0);
          else say(at, e.text, e.level);
          break;
        }
        case "send-user-message":
          if (e.later) timers.setTimeout(() => pi.sendUserMessage(e.text), 0);
          else pi.sendUserMessage(e.text);
          break;
        case "append":
          for (const entry of e.entries) pi.appendEntry(entry.customType, entry.data);
          break;
        case "notify":
          if (ctx) say(ctx, e.text, e.level);
          break;
      }
    }
  };

  /** The adapter prepares a job from the current branch (undefined: nothing to compact). */
  function start(request: StartRequest, ctx: ExtensionContext | undefined): void {
    if (!ctx) return;
    const model = ctx.model;
    const settings = o.getCompactionSettings(ctx);
    const branch = ctx.sessionManager.getBranch();
    const leaf = branch[branch.length - 1];
    const prepared = leaf && model ? adapter.prepare({ branch, settings, ctx }) : undefined;
    let job: JobSnapshot | undefined;
    if (leaf && model && prepared !== undefined) {
      const thinkingLevel = ctx.thinkingLevel ?? pi.getThinkingLevel();
      const fields = adapter.createSnapshot(prepared, {
        sessionId: ctx.sessionManager.getSessionId(),
        snapshotLeafId: leaf.id,
        modelKey: modelKeyOf(model),
        thinkingLevel,
        settingsKey: settingsKeyOf(settings),
      });
      job = { ...fields, jobId: newJobId(), adapterId: adapter.id, manual: request.manual, startedAt: now() };
      runs.set(job.jobId, { prepared, abort: new AbortController(), meter: createRunSpendMeter(), ctx, model, thinkingLevel });
    }
    run({ type: "compaction-started", setup, live: live(ctx), job, request }, ctx);
    // A job the engine did not take (busy) has no run.
    if (job && cell.get().compaction.running !== job.jobId) runs.delete(job.jobId);
  }

  function runInBackground(jobId: string): void {
    const r = runs.get(jobId);
    if (!r) return;
    Promise.resolve()
      .then(() => adapter.run(r.prepared, { signal: r.abort.signal, ctx: r.ctx, model: r.model, thinkingLevel: r.thinkingLevel, meter: r.meter }))
      .then(
        (output) => ({ result: adapter.toCompaction(output, r.prepared) }),
        (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
      )
      .catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }))
      .then((outcome: { result?: ReturnType<AnyAsyncCompactionAdapter["toCompaction"]>; error?: string }) => {
        // Dropped at shutdown (its spend so far recorded then): the session it belonged to is gone.
        if (runs.get(jobId) !== r) return;
        runs.delete(jobId);
        const at = lastCtx;
        const spend = r.meter.spend();
        run({ type: "compaction-settled", setup, live: at ? live(at) : undefined, now: now(), jobId, ...outcome, ...(spend ? { spend } : {}) }, at);
      });
  }

  /** Until job `jobId` leaves pending, `maxWaitMs` passes, or Pi's signal aborts. */
  function waitFor(jobId: string, maxWaitMs: number, signal: AbortSignal | undefined): Promise<"settled" | "timeout" | "aborted"> {
    const s = cell.get().compaction.job;
    if (!(s.kind === "pending" && s.job.jobId === jobId)) return Promise.resolve("settled");
    if (signal?.aborted) return Promise.resolve("aborted");
    return new Promise((resolve) => {
      let handle: unknown;
      const finish = (how: "settled" | "timeout" | "aborted") => {
        if (waiters.get(jobId) !== wake) return;
        waiters.delete(jobId);
        timers.clearTimeout(handle);
        signal?.removeEventListener("abort", onAbort);
        resolve(how);
      };
      const wake = () => finish("settled");
      const onAbort = () => finish("aborted");
      waiters.set(jobId, wake);
      handle = timers.setTimeout(() => finish("timeout"), maxWaitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  const step = (type: "compaction-session-start" | "compaction-tree" | "compaction-agent-end" | "compaction-command", ctx: ExtensionContext) =>
    run({ type, setup, live: remember(ctx, live(ctx)) }, ctx);

  return {
    handle: {
      adapter,
      get current() {
        return cell.get().compaction.job;
      },
      outlook: () => compactionOutlookOf(cell.get()),
      isLate: (jobId) => jobId in cell.get().compaction.late,
    },
    perform: (effects, ctx) => perform(effects, ctx),
    command: async (ctx) => void step("compaction-command", ctx),
    handlers: {
      session_start: (_e, ctx) => void step("compaction-session-start", ctx),
      session_tree: (_e, ctx) => void step("compaction-tree", ctx),
      agent_end: (_e, ctx) => void step("compaction-agent-end", ctx),
      turn_end: (e: { outcome: string; entries: { type: string }[] }, ctx) =>
        run({ type: "compaction-turn-end", setup, live: remember(ctx, live(ctx)), outcome: e.outcome, entries: e.entries }, ctx).result,
      model_select: (e: { model: { provider: string; id: string } }, ctx) =>
        void run({ type: "compaction-model-select", setup, live: remember(ctx, live(ctx)), modelKey: modelKeyOf(e.model) }, ctx),
      thinking_level_select: (e: { level: string }, ctx) => void run({ type: "compaction-thinking-select", setup, live: live(ctx), level: e.level }, ctx),
      session_compact: (e: { fromExtension: boolean; compactionEntry: { id: string; details: unknown; tokensBefore: number } }, ctx) =>
        void run({ type: "compaction-compacted", setup, live: remember(ctx, live(ctx)), fromExtension: e.fromExtension, entry: e.compactionEntry }, ctx),
      session_compact_failed: (e: { fromExtension: boolean; errorMessage?: string; aborted?: boolean }, ctx) =>
        void run({ type: "compaction-compact-failed", setup, live: live(ctx), fromExtension: e.fromExtension, ...(e.errorMessage !== undefined ? { errorMessage: e.errorMessage } : {}), ...(e.aborted !== undefined ? { aborted: e.aborted } : {}) }, ctx),
      session_before_compact: async (e: SessionBeforeCompactEvent, ctx) => {
        const event = { type: "compaction-before-compact" as const, setup, preparation: e.preparation, branchEntries: e.branchEntries, ...(e.customInstructions !== undefined ? { customInstructions: e.customInstructions } : {}), reason: e.reason };
        const first = run({ ...event, live: remember(ctx, live(ctx)) }, ctx);
        if (!first.wait) return first.result;
        const from = now();
        const waitEnd = await waitFor(first.wait.jobId, first.wait.maxWaitMs, e.signal);
        return run({ ...event, live: live(ctx), waited: { waitEnd, waitedMs: now() - from } }, ctx).result;
      },
      cache_warming_decision: (e: { warmCost: number; missCost: number; continuationProbability: number; action: "warm" | "stop" }) =>
        cell.step({ type: "compaction-warming", decision: e }).warming ? { action: "stop" as const } : undefined,
      session_shutdown: (_e, ctx) => {
        // The runs not ended yet: what their calls cost so far is recorded now, while the session can still be written.
        const inFlight: Record<string, RunSpend> = {};
        for (const [jobId, r] of runs) {
          const spend = r.meter.spend();
          if (spend) inFlight[jobId] = spend;
        }
        run({ type: "compaction-shutdown", setup, live: live(ctx), inFlight }, ctx);
        runs.clear();
        lastCtx = undefined;
      },
    },
  };
}
