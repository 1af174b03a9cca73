/**
 * One streaming summary call guarded by idle and ceiling timeouts. Never throws and never
 * waits on a hung stream: every way it can fail comes back as a `failed` outcome.
 *
 * The injected call has the shape of `ctx.modelRegistry.streamSimple(model, context, options)`,
 * so the shell passes `(m, c, o) => ctx.modelRegistry.streamSimple(m, c, o)` unchanged.
 */
import type { AssistantMessage, Context } from "@earendil-works/pi-ai";
import { type Timers, type WatchdogReason, startWatchdog } from "./stream-watchdog.ts";

/** The fields of the final assistant message the summarizer reads. */
export type SummaryResultMessage = Pick<AssistantMessage, "content" | "stopReason" | "errorMessage" | "usage">;

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

export interface CallUsage {
  /** Prompt tokens: fresh input plus cache reads and writes. */
  inputTokens: number;
  outputTokens: number;
  cost: number;
  /** The provider reported nothing before the call was stopped: the estimate of what was sent. */
  estimated?: true;
}

export type SummaryCallOutcome =
  | { ok: true; text: string; usage: CallUsage; truncated: boolean }
  | { ok: false; reason: SummaryFailureReason; detail?: string; usage?: CallUsage };

const ZERO_USAGE: CallUsage = { inputTokens: 0, outputTokens: 0, cost: 0 };

/** Usage a stream event carries so far (pi-ai's events hold the partial message; the last ones the final or error one). */
function usageSeen(event: unknown): CallUsage | undefined {
  const e = event as { partial?: SummaryResultMessage; message?: SummaryResultMessage; error?: SummaryResultMessage } | undefined;
  const message = e?.partial ?? e?.message ?? e?.error;
  if (!message?.usage) return undefined;
  const usage = usageOf(message);
  return usage.inputTokens > 0 || usage.outputTokens > 0 || usage.cost > 0 ? usage : undefined;
}

/** Characters of a summary call's prompt (system prompt and message texts), for an estimate of what was sent. */
export function promptChars(context: Context): number {
  let chars = context.systemPrompt?.length ?? 0;
  for (const m of context.messages) {
    const content = (m as { content?: unknown }).content;
    if (typeof content === "string") chars += content.length;
    else if (Array.isArray(content)) for (const b of content) if (b && typeof b === "object" && "text" in b && typeof b.text === "string") chars += b.text.length;
  }
  return chars;
}

export function usageOf(message: SummaryResultMessage): CallUsage {
  const u = message.usage;
  if (!u) return ZERO_USAGE;
  return { inputTokens: (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0), outputTokens: u.output ?? 0, cost: u.cost?.total ?? 0 };
}

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

/**
 * What a summary call that was stopped before any usage came back is taken to cost: its prompt
 * at chars/4 tokens (Pi's own estimate), billed as uncached input at `inputPerMillion` dollars.
 */
export function sentUsageEstimate(context: Context, inputPerMillion: number): CallUsage {
  const inputTokens = Math.ceil(promptChars(context) / 4);
  return { inputTokens, outputTokens: 0, cost: (inputTokens * Math.max(0, inputPerMillion)) / 1_000_000 };
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
  /** The call went out (the stream was asked for): a stop then still costs what was sent. */
  let sent = false;
  let seen: CallUsage | undefined;
  /** Spend of a call stopped before its end: the usage seen so far, else the estimate of what was sent. */
  const stoppedSpend = (): CallUsage | undefined => seen ?? (sent && options.sentEstimate ? { ...options.sentEstimate(options.context), estimated: true } : undefined);

  try {
    sent = true;
    const stream = options.call(options.model, options.context, { signal: controller.signal, maxTokens: options.maxTokens });
    iterator = stream[Symbol.asyncIterator]();
    for (;;) {
      const step = await Promise.race([iterator.next(), stopped]);
      if (step.done) break;
      seen = usageSeen(step.value) ?? seen;
      watchdog.touch();
    }
    const message = await Promise.race([stream.result(), stopped]);
    const usage = usageOf(message);
    if (message.stopReason === "error") return { ok: false, reason: "error-result", detail: message.errorMessage, usage };
    if (message.stopReason === "aborted") return { ok: false, reason: "aborted", detail: message.errorMessage, usage };
    const text = textOf(message);
    if (text === "") return { ok: false, reason: "empty", usage };
    return { ok: true, text, usage, truncated: message.stopReason === "length" };
  } catch (error) {
    if (error instanceof Stopped) {
      const spend = stoppedSpend();
      return { ok: false, reason: error.reason, ...(spend ? { usage: spend } : {}) };
    }
    const spend = stopReason !== undefined ? stoppedSpend() : seen;
    return { ok: false, reason: stopReason ?? "thrown", detail: error instanceof Error ? error.message : String(error), ...(spend ? { usage: spend } : {}) };
  } finally {
    watchdog.stop();
    outer?.removeEventListener("abort", onOuterAbort);
    // A stopped stream may never settle: ask it to close, but do not wait for it.
    if (stopReason !== undefined) void Promise.resolve(iterator?.return?.()).catch(() => {});
  }
}
