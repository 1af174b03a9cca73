/** Hand-driven timers and scripted summary streams for the summarizer tests. */
import type { StreamSummaryCall, SummaryResultMessage, SummaryStream } from "../../../src/summarize/summary-call.ts";
import type { Context } from "@earendil-works/pi-ai";
import { ManualTimers } from "../manual-timers.ts";

export { ManualTimers };

/** Let pending promise callbacks run (a macrotask turn, no real waiting). */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

export function resultMessage(text: string, opts: Partial<SummaryResultMessage> & { input?: number; output?: number; cacheRead?: number; cost?: number } = {}): SummaryResultMessage {
  const input = opts.input ?? 1000;
  const output = opts.output ?? 100;
  const cacheRead = opts.cacheRead ?? 0;
  return {
    content: text === "" ? [] : [{ type: "text", text }],
    stopReason: opts.stopReason ?? "stop",
    errorMessage: opts.errorMessage,
    usage: {
      input,
      output,
      cacheRead,
      cacheWrite: 0,
      totalTokens: input + output + cacheRead,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: opts.cost ?? 0.0042 },
    },
  };
}

/** A stream that yields `events` text deltas and then resolves with `message`. */
export function scriptedStream(message: SummaryResultMessage, events = 3): SummaryStream {
  return {
    async *[Symbol.asyncIterator]() {
      for (let i = 0; i < events; i++) yield { type: "text_delta" };
      yield { type: "done" };
    },
    result: async () => message,
  };
}

/** A stream whose first `next()` never settles. */
export function hangingStream(): SummaryStream {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<{ type: string }>>(() => {}) }),
    result: () => new Promise<SummaryResultMessage>(() => {}),
  };
}

/** A stream that yields one event per `everyMs` of manual time, forever. */
export function tricklingStream(timers: ManualTimers, everyMs: number): SummaryStream {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise<IteratorResult<{ type: string }>>((resolve) => timers.setTimeout(() => resolve({ done: false, value: { type: "text_delta" } }), everyMs)),
    }),
    result: () => new Promise<SummaryResultMessage>(() => {}),
  };
}

export interface RecordedCall {
  model: string;
  context: Context;
  signal: AbortSignal;
  maxTokens?: number;
}

export function fakeComplete(respond: (context: Context, n: number) => SummaryStream): { complete: StreamSummaryCall<string>; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const complete: StreamSummaryCall<string> = (model, context, options) => {
    calls.push({ model, context, signal: options.signal, maxTokens: options.maxTokens });
    return respond(context, calls.length);
  };
  return { complete, calls };
}
