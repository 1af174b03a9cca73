/** The run meter counts each call as the flush summarizer's calls are counted (`call-spend.ts`). */
import { describe, expect, test } from "bun:test";
import { createRunSpendMeter, runSpendOfUsage } from "./run-spend.ts";

function stream(events: unknown[], final: Promise<{ usage?: unknown }>) {
  return {
    async *[Symbol.asyncIterator]() {
      for (const e of events) yield e;
    },
    result: () => final as Promise<never>,
  };
}

const usage = (input: number, output: number, total: number) => ({ input, output, cacheRead: 5, cacheWrite: 0, totalTokens: input + output + 5, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total } });
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe("run spend meter", () => {
  test("no call: nothing; an ended call: its final usage; one in flight: the usage reported so far, else the estimate of what was sent", async () => {
    const meter = createRunSpendMeter();
    expect(meter.spend()).toBeUndefined();
    const model = { cost: { input: 3 } } as never;
    const fn = meter.wrap((_m: never, _c: never) => stream([], Promise.resolve({ usage: usage(100, 20, 0.01) })));
    await fn(model, { systemPrompt: "x".repeat(40), messages: [] } as never);
    await settle();
    expect(meter.spend()).toEqual({ calls: 1, inputTokens: 105, outputTokens: 20, cost: 0.01 });
    // In flight: reported its prompt's usage, no final message yet.
    const inFlight = meter.wrap((_m: never, _c: never) => stream([{ type: "start", partial: { usage: usage(200, 0, 0.02) } }], new Promise(() => {})));
    await inFlight(model, { messages: [] } as never);
    await settle();
    expect(meter.spend()).toEqual({ calls: 2, inputTokens: 310, outputTokens: 20, cost: 0.03 });
    // Nothing reported: 400 characters sent ≈ 100 tokens at $3 per million, estimated.
    const silent = meter.wrap((_m: never, _c: never) => stream([], new Promise(() => {})));
    await silent(model, { systemPrompt: "y".repeat(400), messages: [] } as never);
    await settle();
    expect(meter.spend()).toEqual({ calls: 3, inputTokens: 410, outputTokens: 20, cost: 0.03 + 0.0003, estimated: true });
  });

  test("the usage on a result in Pi's shape, for an adapter without the meter", () => {
    expect(runSpendOfUsage(usage(10, 2, 0.5))).toEqual({ calls: 1, inputTokens: 15, outputTokens: 2, cost: 0.5 });
    expect(runSpendOfUsage(undefined)).toBeUndefined();
    expect(runSpendOfUsage({ input: 0, output: 0 })).toBeUndefined();
  });
});
