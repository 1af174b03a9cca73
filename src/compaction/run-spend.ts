/**
 * What a background compaction run's summary calls cost: every call it makes through the
 * metered stream function is counted as `call-spend.ts` counts the flush summarizer's calls —
 * an ended call its final usage; a call still running (stopped by an abort, or in flight at
 * shutdown) the usage its stream reported so far, else the estimate of what was sent at the
 * model's input price. The host gives each run a meter (`RunOptions.meter`) and hands its
 * figure to the engine when the run ends or the session shuts down.
 */
import type { Context } from "@earendil-works/pi-ai";
import { type CallSpend, type CallUsage, sentUsageEstimate, sumCallUsage, trackCallSpend, usageOf } from "../summarize/call-spend.ts";

/** The summary calls of one run: how many went out, their usage added up. */
export interface RunSpend extends CallUsage {
  calls: number;
}

/** A stream in the shape pi-ai returns: events, and the final message. */
export interface MeteredStream {
  [Symbol.asyncIterator](): AsyncIterator<unknown>;
  result(): Promise<{ usage?: CallUsageSource }>;
}

type CallUsageSource = Parameters<typeof usageOf>[0]["usage"];

/** A stream function as Pi's `compact()` takes it (`streamFn`). */
export type StreamFnLike<TStream extends MeteredStream> = (model: never, context: never, options?: never) => TStream | Promise<TStream>;

export interface RunSpendMeter {
  /** `fn` with every call through it counted. */
  wrap<F extends StreamFnLike<MeteredStream>>(fn: F): F;
  /** The calls so far, their usage added up (each as far as it is known now); undefined: no call went out. */
  spend(): RunSpend | undefined;
}

const inputPriceOf = (model: unknown): number => {
  const input = (model as { cost?: { input?: unknown } } | undefined)?.cost?.input;
  return typeof input === "number" && Number.isFinite(input) ? input : 0;
};

export function createRunSpendMeter(): RunSpendMeter {
  const calls: CallSpend[] = [];
  return {
    wrap<F extends StreamFnLike<MeteredStream>>(fn: F): F {
      const metered = async (model: unknown, context: unknown, options?: unknown) => {
        const price = inputPriceOf(model);
        const call = trackCallSpend({ context: context as Context, sentEstimate: (c) => sentUsageEstimate(c, price) });
        calls.push(call);
        call.sent();
        const stream = await (fn as unknown as (m: unknown, c: unknown, o?: unknown) => MeteredStream | Promise<MeteredStream>)(model, context, options);
        // Pi's `compact()` reads the result only: the events are read here, for the usage reported so far.
        void (async () => {
          for await (const event of stream) call.saw(event);
        })().catch(() => {});
        void stream.result().then(
          (message) => void call.ended(message),
          () => {},
        );
        return stream;
      };
      return metered as unknown as F;
    },
    spend: () => (calls.length === 0 ? undefined : { calls: calls.length, ...sumCallUsage(calls.map((c) => c.current())) }),
  };
}

/** A run's spend from the usage on its result in Pi's shape (an adapter that does not use the meter): one call's worth. */
export function runSpendOfUsage(usage: unknown): RunSpend | undefined {
  if (!usage || typeof usage !== "object") return undefined;
  const u = usageOf({ usage: usage as CallUsageSource });
  return u.inputTokens > 0 || u.outputTokens > 0 || u.cost > 0 ? { calls: 1, ...u } : undefined;
}
