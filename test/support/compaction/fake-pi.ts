/**
 * A fake Pi host for the compaction wiring: records handlers, drives hooks, and mimics the
 * parts of Pi's behaviour the wiring relies on (draft commit, ctx.compact() flow), over a
 * real in-memory SessionManager. Timers are manual.
 */
import { DEFAULT_COMPACTION_SETTINGS, type ExtensionAPI, type ExtensionContext, type SessionManager } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "../../../src/compaction/adapter.ts";
import type { ReadyCompaction } from "../../../src/compaction/job-reducer.ts";
import type { LifecycleEvent } from "../../../src/compaction/lifecycle.ts";
import { piCompactionPrimitives } from "../../../src/host/compaction-runtime.ts";
import { prepareCompaction } from "../../../src/compaction/prepare.ts";
import { registerCompactionCore } from "../../../src/host/compaction-core.ts";
import type { CompactionPreparation } from "../../../src/compaction/primitives.ts";
import { ManualTimers } from "../manual-timers.ts";

export { ManualTimers };

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}
export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let queued promise continuations run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** An adapter backed by Pi's preparation whose runs the test settles by hand. */
export function scriptedAdapter() {
  const runs: { prepared: CompactionPreparation; signal: AbortSignal; done: Deferred<ReadyCompaction> }[] = [];
  const adapter: AnyAsyncCompactionAdapter = {
    id: "test",
    label: "test compaction",
    prepare: ({ branch, settings }) => prepareCompaction(branch, settings, piCompactionPrimitives),
    createSnapshot: (prepared: CompactionPreparation, context) => ({ ...context, firstKeptEntryId: prepared.firstKeptEntryId, promptVersion: "v-test" }),
    run: (prepared: CompactionPreparation, { signal }) => {
      const done = deferred<ReadyCompaction>();
      runs.push({ prepared, signal, done });
      return done.promise;
    },
    toCompaction: (r: ReadyCompaction) => r,
  };
  /** Finish run `i` with a summary for its own preparation. */
  const finish = (i: number, summary = `summary of run ${i}`) =>
    runs[i].done.resolve({ summary, firstKeptEntryId: runs[i].prepared.firstKeptEntryId, tokensBefore: runs[i].prepared.tokensBefore, details: { readFiles: ["r.ts"], modifiedFiles: [] } });
  return { adapter, runs, finish };
}

type Handler = (event: any, ctx: any) => any;

export interface HostOptions {
  sm: SessionManager;
  contextWindow?: number;
  settings?: { reserveTokens: number; keepRecentTokens: number };
  timeoutMs?: number;
  /** Longest wait for a pending job in session_before_compact (default 5,000 ms). */
  waitMs?: number;
  /** Stall budget before a late job is replaced by a digest (default -1: never, so the wait tests see the plain wait). */
  stallMs?: number;
  adapter?: AnyAsyncCompactionAdapter;
  isActive?: (ctx: ExtensionContext) => boolean;
}

export class FakeHost {
  readonly handlers = new Map<string, Handler[]>();
  readonly commands = new Map<string, (args: string, ctx: any) => Promise<void>>();
  readonly events: LifecycleEvent[] = [];
  readonly status = new Map<string, string | undefined>();
  /** Every `ui.setStatus` call, in order. */
  readonly statusCalls: { key: string; text: string | undefined }[] = [];
  readonly notes: string[] = [];
  readonly sentUserMessages: string[] = [];
  readonly compactCalls: { customInstructions?: string }[] = [];
  readonly timers = new ManualTimers();
  idle = true;
  pendingMessages = false;
  streaming = false;
  tokens: number | null = 0;
  /** `api` and `promptCache` (seconds) give the cache an entry lifetime (`cacheTtlMs`); without an API it is unknown. */
  model: { provider: string; id: string; contextWindow: number; api?: string; promptCache?: { short?: number } };
  thinkingLevel = "off";
  settings: { enabled: boolean; reserveTokens: number; keepRecentTokens: number };
  readonly controller;
  readonly sm: SessionManager;

  constructor(opts: HostOptions & { adapter: AnyAsyncCompactionAdapter }) {
    this.sm = opts.sm;
    this.model = { provider: "faux", id: "m1", contextWindow: opts.contextWindow ?? 100_000 };
    this.settings = { ...DEFAULT_COMPACTION_SETTINGS, ...(opts.settings ?? { reserveTokens: 10_000, keepRecentTokens: 2_000 }) };
    const pi = {
      on: (name: string, h: Handler) => {
        this.handlers.set(name, [...(this.handlers.get(name) ?? []), h]);
        return () => {};
      },
      registerCommand: (name: string, o: { handler: (args: string, ctx: any) => Promise<void> }) => this.commands.set(name, o.handler),
      appendEntry: (type: string, data: unknown) => this.sm.appendCustomEntry(type, data),
      sendUserMessage: (text: string) => this.sentUserMessages.push(text),
      getThinkingLevel: () => this.thinkingLevel,
    } as unknown as ExtensionAPI;
    this.controller = registerCompactionCore(pi, opts.adapter, {
      primitives: piCompactionPrimitives,
      getCompactionSettings: () => this.settings,
      config: { enabled: true, startRatio: 0.5, timeoutMs: opts.timeoutMs ?? 60_000, waitMs: opts.waitMs ?? 5_000, stallMs: opts.stallMs ?? -1 },
      onLifecycleEvent: (e) => this.events.push(e),
      timers: this.timers,
      now: () => this.timers.now,
      isActive: opts.isActive,
      newJobId: (() => {
        let n = 0;
        return () => `job-${++n}`;
      })(),
    });
  }

  /** Live like Pi's: getters read the host's current state, so a held ctx stays truthful. */
  ctx(): ExtensionContext {
    const host = this;
    return {
      get model() {
        return host.model;
      },
      get thinkingLevel() {
        return host.thinkingLevel;
      },
      get signal() {
        return host.streaming ? new AbortController().signal : undefined;
      },
      cwd: "/tmp",
      sessionManager: this.sm,
      isIdle: () => this.idle,
      hasPendingMessages: () => this.pendingMessages,
      getContextUsage: () => ({ tokens: this.tokens, contextWindow: this.model.contextWindow, percent: null }),
      compact: (o: { customInstructions?: string; onError?: (e: Error) => void } = {}) => {
        this.compactCalls.push({ customInstructions: o.customInstructions });
        void this.runPiCompaction(o.customInstructions).catch((e: Error) => o.onError?.(e));
      },
      ui: {
        setStatus: (k: string, v: string | undefined) => {
          this.statusCalls.push({ key: k, text: v });
          this.status.set(k, v);
        },
        notify: (m: string) => this.notes.push(m),
      },
      modelRegistry: {},
    } as unknown as ExtensionContext;
  }

  async fire(name: string, event: Record<string, unknown> = {}): Promise<any> {
    let last: any;
    for (const h of this.handlers.get(name) ?? []) last = await h({ type: name, ...event }, this.ctx());
    return last;
  }

  /** Pi's turn_end: handlers propose drafts, then Pi commits them in order. */
  async turnEnd(outcome: "completed" | "aborted" | "error" = "completed"): Promise<any> {
    const result = await this.fire("turn_end", { entries: [], continue: false, outcome });
    for (const draft of result?.entries ?? []) {
      if (draft.type === "compaction") this.sm.appendCompaction(draft.summary, draft.firstKeptEntryId, 0, draft.details, true, draft.usage);
    }
    return result;
  }

  /** Pi's manual/auto compaction flow, reduced to what the hooks see. */
  async runPiCompaction(customInstructions?: string, reason = "manual", signal = new AbortController().signal): Promise<"extension" | "default" | "cancelled"> {
    const branchEntries = this.sm.getBranch();
    const preparation = prepareCompaction(branchEntries, this.settings, piCompactionPrimitives);
    if (!preparation) throw new Error("Nothing to compact");
    const r = await this.fire("session_before_compact", { preparation, branchEntries, customInstructions, reason, willRetry: false, signal });
    if (r?.cancel) {
      await this.fire("session_compact_failed", { reason, aborted: true, willRetry: false, fromExtension: false });
      return "cancelled";
    }
    const fromExtension = Boolean(r?.compaction);
    const c = r?.compaction ?? { summary: "pi default summary", firstKeptEntryId: preparation.firstKeptEntryId, tokensBefore: preparation.tokensBefore, details: { readFiles: [], modifiedFiles: [] } };
    const id = this.sm.appendCompaction(c.summary, c.firstKeptEntryId, c.tokensBefore, c.details, fromExtension, c.usage);
    await this.fire("session_compact", { compactionEntry: this.sm.getEntry(id), fromExtension, reason, willRetry: false });
    return fromExtension ? "extension" : "default";
  }

  state() {
    return this.controller.current;
  }
}
