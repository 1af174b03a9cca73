/**
 * One streaming summary call guarded by idle and ceiling timeouts. Never throws and never
 * waits on a hung stream: every way it can fail comes back as a `failed` outcome.
 *
 * The injected call has the shape of `ctx.modelRegistry.streamSimple(model, context, options)`,
 * so the shell passes `(m, c, o) => ctx.modelRegistry.streamSimple(m, c, o)` unchanged.
 */
import type { Context } from "@earendil-works/pi-ai";
import { type CallUsage, type SummaryResultMessage, trackCallSpend } from "./call-spend.ts";
import { type Timers, type WatchdogReason, startWatchdog } from "./stream-watchdog.ts";

export { type CallUsage, type SummaryResultMessage, promptChars, sentUsageEstimate, usageOf } from "./call-spend.ts";

/** What `streamSimple` returns, narrowed: events (only their arrival matters) and the final message. */
export interface SummaryStream {
  [Symbol.asyncIterator](): AsyncIterator<{ type: string }>;
  result(): Promise<SummaryResultMessage>;
}

export interface SummaryCallOptions {
  signal: AbortSignal;
  maxTokens?: number;
}

export type StreamSummaryCall<TModel> = (model: TModel, context: Context, options: SummaryCallOptions) => SummaryStream;

export type SummaryFailureReason = WatchdogReason | "aborted" | "error-result" | "thrown" | "empty";

export type SummaryCallOutcome =
  | { ok: true; text: string; usage: CallUsage; truncated: boolean }
  | { ok: false; reason: SummaryFailureReason; detail?: string; usage?: CallUsage };

function textOf(message: SummaryResultMessage): string {
  return message.content
    .filter((b): b is Extract<SummaryResultMessage["content"][number], { type: "text" }> => b.type === "text")
    .map((b) => b.text)
    .join("")
    .trim();
}

class Stopped extends Error {
  constructor(readonly reason: SummaryFailureReason) {
    super(reason);
  }
}

export async function runSummaryCall<TModel>(options: {
  call: StreamSummaryCall<TModel>;
  model: TModel;
  context: Context;
  maxTokens?: number;
  idleMs: number;
  ceilingMs: number;
  timers: Timers;
  signal?: AbortSignal;
  /**
   * What the call costs when it is stopped (abort, timeout) before the provider reported any
   * usage: the estimate of what was sent. A stopped call reports the usage seen so far, else this.
   */
  sentEstimate?: (context: Context) => CallUsage;
}): Promise<SummaryCallOutcome> {
  const { signal: outer } = options;
  if (outer?.aborted) return { ok: false, reason: "aborted" };

  const controller = new AbortController();
  let stopReason: SummaryFailureReason | undefined;
  let rejectStopped: (error: Stopped) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    rejectStopped = reject;
  });
  stopped.catch(() => {}); // observed through the races below; never an unhandled rejection
  const stop = (reason: SummaryFailureReason) => {
    if (stopReason !== undefined) return;
    stopReason = reason;
    controller.abort();
    rejectStopped(new Stopped(reason));
  };
  const onOuterAbort = () => stop("aborted");
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  const watchdog = startWatchdog({ timers: options.timers, idleMs: options.idleMs, ceilingMs: options.ceilingMs, onFire: stop });
  let iterator: AsyncIterator<{ type: string }> | undefined;
  // Once the call went out, a stop still costs the usage seen so far, else what was sent (call-spend.ts).
  const spend = trackCallSpend({ context: options.context, ...(options.sentEstimate ? { sentEstimate: options.sentEstimate } : {}) });

  try {
    spend.sent();
    const stream = options.call(options.model, options.context, { signal: controller.signal, maxTokens: options.maxTokens });
    iterator = stream[Symbol.asyncIterator]();
    for (;;) {
      const step = await Promise.race([iterator.next(), stopped]);
      if (step.done) break;
      spend.saw(step.value);
      watchdog.touch();
    }
    const message = await Promise.race([stream.result(), stopped]);
    const usage = spend.ended(message);
    if (message.stopReason === "error") return { ok: false, reason: "error-result", detail: message.errorMessage, usage };
    if (message.stopReason === "aborted") return { ok: false, reason: "aborted", detail: message.errorMessage, usage };
    const text = textOf(message);
    if (text === "") return { ok: false, reason: "empty", usage };
    return { ok: true, text, usage, truncated: message.stopReason === "length" };
  } catch (error) {
    if (error instanceof Stopped) {
      const usage = spend.stopped();
      return { ok: false, reason: error.reason, ...(usage ? { usage } : {}) };
    }
    const usage = stopReason !== undefined ? spend.stopped() : spend.seen();
    return { ok: false, reason: stopReason ?? "thrown", detail: error instanceof Error ? error.message : String(error), ...(usage ? { usage } : {}) };
  } finally {
    watchdog.stop();
    outer?.removeEventListener("abort", onOuterAbort);
    // A stopped stream may never settle: ask it to close, but do not wait for it.
    if (stopReason !== undefined) void Promise.resolve(iterator?.return?.()).catch(() => {});
  }
}
