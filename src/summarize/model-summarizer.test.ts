import { describe, expect, test } from "bun:test";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { ModelRegistry } from "@earendil-works/pi-coding-agent";
import type { CapturedCall, ToolBatch } from "./batch.ts";
import { extractiveSummaryText } from "./extractive.ts";
import { findMissingFacts } from "./fidelity.ts";
import { type SummaryProgress, summarizeBatches } from "./model-summarizer.ts";
import type { Context } from "@earendil-works/pi-ai";
import { promptChars, sentUsageEstimate, type StreamSummaryCall, type SummaryResultMessage, type SummaryStream } from "./summary-call.ts";
import { ManualTimers, type RecordedCall, fakeComplete, flush, hangingStream, resultMessage, scriptedStream, tricklingStream } from "../../test/support/summarize/fake-model.ts";

// Type-level check: the shell can hand Pi's registry call over unchanged.
export function shellAdapter(registry: ModelRegistry): StreamSummaryCall<Model<Api>> {
  return (model, context, options) => registry.streamSimple(model, context, options);
}

const OUTPUT = [
  "> app@1.0.0 build",
  ...Array.from({ length: 60 }, (_, i) => `compiling module ${i} of 60`),
  "src/app.ts(4,2): error TS2322: Type 'string' is not assignable to type 'number'.",
  "",
  "Command exited with code 2",
].join("\n"); // about 1,800 characters: above the 1,024 trivial threshold

function batch(key: string, command = "npm run build", output = OUTPUT): ToolBatch {
  const call: CapturedCall = { occurrenceKey: key, toolCallId: key.split("@")[0], toolName: "bash", arguments: { command }, resultText: output, isError: true, assistantTimestamp: 10, resultTimestamp: 11 };
  return { batchKey: key, assistantTimestamp: 10, calls: [call] };
}

const GOOD = "[1] `npm run build` failed, exit code 2: src/app.ts(4,2): error TS2322: Type 'string' is not assignable to type 'number'. 60 modules compiled.";
const timeouts = { idleMs: 1_000, ceilingMs: 5_000 };

describe("summarizeBatches: model path", () => {
  test("uses the model text, records usage and cost, keeps every fact", async () => {
    const { complete, calls } = fakeComplete(() => scriptedStream(resultMessage(GOOD, { input: 1000, cacheRead: 200, output: 80, cost: 0.0042 })));
    const [s] = await summarizeBatches({ batches: [batch("a@10#0")], complete, model: "m", timeouts, timers: new ManualTimers() });
    expect(s).toMatchObject({ batchKey: "a@10#0", source: "model", text: GOOD, inputTokens: 1200, outputTokens: 80, cost: 0.0042, repairedFacts: 0 });
    expect(calls).toHaveLength(1);
    const prompt = JSON.stringify(calls[0].context);
    expect(prompt).toContain("npm run build");
    expect(calls[0].context.systemPrompt).toContain("Keep every file path, every command, every exit code and every error line");
  });

  test("appends verbatim the facts the model dropped", async () => {
    const { complete } = fakeComplete(() => scriptedStream(resultMessage("The build failed.")));
    const b = batch("a@10#0");
    const [s] = await summarizeBatches({ batches: [b], complete, model: "m", timeouts, timers: new ManualTimers() });
    expect(s.source).toBe("model");
    // dropped: the command, exit code 2, the TS error line, the path src/app.ts
    expect(s.repairedFacts).toBe(4);
    expect(findMissingFacts(b, s.text)).toEqual({ paths: [], commands: [], exitCodes: [], errorLines: [], images: [] });
    expect(s.text.startsWith("The build failed.")).toBe(true);
  });

  test("keeps raw when the model summary is longer than the output", async () => {
    const { complete } = fakeComplete(() => scriptedStream(resultMessage(GOOD + " ".repeat(1) + "padding ".repeat(400), { cost: 0.01 })));
    const [s] = await summarizeBatches({ batches: [batch("a@10#0")], complete, model: "m", timeouts, timers: new ManualTimers() });
    expect(s.source).toBe("raw");
    expect(s.text).toBe("");
    expect(s.cost).toBe(0.01); // the call was paid for
  });
});

describe("summarizeBatches: faults fall back to the extractive summary", () => {
  async function runFault(stream: (timers: ManualTimers) => SummaryStream, drive?: (timers: ManualTimers, calls: RecordedCall[]) => Promise<void>) {
    const timers = new ManualTimers();
    const b = batch("a@10#0");
    const { complete, calls } = fakeComplete(() => stream(timers));
    const pending = summarizeBatches({ batches: [b], complete, model: "m", timeouts, timers });
    if (drive) await drive(timers, calls);
    const [s] = await pending;
    expect(s.source).toBe("extractive");
    expect(s.text).toBe(extractiveSummaryText(b));
    // A failed attempt's spend is the fallback's: what the provider billed for it (0 when it reported none).
    expect(s.cost).toBe(s.failedAttemptUsage?.cost ?? 0);
    expect(timers.pending).toBe(0); // no timer left behind
    return { s, calls };
  }

  test("500-like error result", async () => {
    const { s } = await runFault(() => scriptedStream(resultMessage("", { stopReason: "error", errorMessage: "500 Internal Server Error" })));
    expect(s.fallbackReason).toBe("error-result");
    expect(s.fallbackDetail).toBe("500 Internal Server Error");
  });

  test("the call throws, or the stream throws mid-way", async () => {
    const thrown = await runFault(() => {
      throw new Error("no credentials");
    });
    expect(thrown.s).toMatchObject({ fallbackReason: "thrown", fallbackDetail: "no credentials" });
    const broken: SummaryStream = {
      async *[Symbol.asyncIterator]() {
        yield { type: "start" };
        throw new Error("socket hang up");
      },
      result: async () => resultMessage(GOOD),
    };
    expect((await runFault(() => broken)).s.fallbackReason).toBe("thrown");
  });

  test("empty answer", async () => {
    const { s } = await runFault(() => scriptedStream(resultMessage("   ")));
    expect(s.fallbackReason).toBe("empty");
    expect(s.failedAttemptUsage).toEqual({ inputTokens: 1000, outputTokens: 100, cost: 0.0042 });
  });

  test("hang: the idle timer fires and aborts the call", async () => {
    const { s, calls } = await runFault(hangingStream, async (timers, calls) => {
      await flush();
      timers.advance(999);
      await flush();
      expect(calls[0].signal.aborted).toBe(false); // 1 ms before the idle limit
      timers.advance(1);
    });
    expect(s.fallbackReason).toBe("idle-timeout");
    expect(calls[0].signal.aborted).toBe(true);
  });

  test("a stream that keeps trickling hits the ceiling", async () => {
    const { s } = await runFault(
      (timers) => tricklingStream(timers, 500), // an event every 500 ms keeps the 1 s idle timer alive
      async (timers) => {
        for (let t = 0; t < 6_000; t += 250) {
          await flush();
          timers.advance(250);
        }
      },
    );
    expect(s.fallbackReason).toBe("ceiling-timeout");
  });

  test("the caller's abort signal ends a hung call at once", async () => {
    const controller = new AbortController();
    const b = batch("a@10#0");
    const { complete } = fakeComplete(() => hangingStream());
    const pending = summarizeBatches({ batches: [b], complete, model: "m", timeouts, timers: new ManualTimers(), signal: controller.signal });
    await flush();
    controller.abort();
    const [s] = await pending;
    expect(s).toMatchObject({ source: "extractive", fallbackReason: "aborted" });
  });
});

describe("summarizeBatches: a call stopped early still counts what it cost", () => {
  /** Reports usage as the provider's first event does (pi-ai's partial message), then hangs. */
  function startedThenHangs(): SummaryStream {
    const partial = resultMessage("", { input: 3_000, output: 12, cost: 0.0093 });
    let sentStart = false;
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => (sentStart ? new Promise<IteratorResult<{ type: string }>>(() => {}) : ((sentStart = true), Promise.resolve({ done: false, value: { type: "start", partial } as { type: string } }))),
      }),
      result: () => new Promise<SummaryResultMessage>(() => {}),
    };
  }

  test("aborted (e.g. at shutdown) after the provider reported usage: that usage is the summary's spend", async () => {
    const controller = new AbortController();
    const { complete } = fakeComplete(() => startedThenHangs());
    const pending = summarizeBatches({ batches: [batch("a@10#0")], complete, model: "m", timeouts, timers: new ManualTimers(), signal: controller.signal });
    await flush();
    controller.abort();
    const [s] = await pending;
    expect(s).toMatchObject({ source: "extractive", fallbackReason: "aborted", inputTokens: 3_000, outputTokens: 12, cost: 0.0093 });
  });

  test("aborted before any usage came back: the estimate of what was sent, marked as one; not sent at all: nothing", async () => {
    const controller = new AbortController();
    const { complete, calls } = fakeComplete(() => hangingStream());
    const sentEstimate = (context: Context) => sentUsageEstimate(context, 3); // $3 per million input tokens
    const pending = summarizeBatches({ batches: [batch("a@10#0")], complete, model: "m", timeouts, timers: new ManualTimers(), signal: controller.signal, sentEstimate });
    await flush();
    controller.abort();
    const [s] = await pending;
    const tokens = Math.ceil(promptChars(calls[0]!.context) / 4);
    expect(tokens).toBeGreaterThan(400); // the prompt carries the 1,800-character output
    expect(s).toMatchObject({ fallbackReason: "aborted", inputTokens: tokens, outputTokens: 0, cost: (tokens * 3) / 1_000_000 });
    expect(s.failedAttemptUsage?.estimated).toBe(true);
    const before = await summarizeBatches({ batches: [batch("b@10#0")], complete, model: "m", timeouts, timers: new ManualTimers(), signal: controller.signal, sentEstimate });
    expect(before[0]).toMatchObject({ fallbackReason: "aborted", cost: 0, inputTokens: 0 });
    expect(calls).toHaveLength(1);
  });
});

describe("summarizeBatches: aliasing, trivial skip, progress", () => {
  test("identical batches are summarized once; the alias costs nothing", async () => {
    const { complete, calls } = fakeComplete((_, n) => scriptedStream(resultMessage(n === 1 ? GOOD : GOOD.replace("npm run build", "npm run lint"))));
    const batches = [batch("a@10#0"), batch("b@20#0", "npm run lint"), batch("c@30#0")];
    const out = await summarizeBatches({ batches, complete, model: "m", timeouts, timers: new ManualTimers(), concurrency: 1 });
    expect(calls).toHaveLength(2); // a and b; c has a's content
    expect(out.map((s) => s.batchKey)).toEqual(["a@10#0", "b@20#0", "c@30#0"]);
    expect(out[2]).toMatchObject({ text: out[0].text, aliasOf: "a@10#0", cost: 0, inputTokens: 0, source: "model" });
    expect(out[2].contentHash).toBe(out[0].contentHash);
    expect(out[1].contentHash).not.toBe(out[0].contentHash);
  });

  test("a cache carries summaries across flushes", async () => {
    const cache = new Map();
    const first = fakeComplete(() => scriptedStream(resultMessage(GOOD)));
    await summarizeBatches({ batches: [batch("a@10#0")], complete: first.complete, model: "m", timeouts, timers: new ManualTimers(), cache });
    const second = fakeComplete(() => scriptedStream(resultMessage(GOOD)));
    const [s] = await summarizeBatches({ batches: [batch("z@99#0")], complete: second.complete, model: "m", timeouts, timers: new ManualTimers(), cache });
    expect(second.calls).toHaveLength(0);
    expect(s).toMatchObject({ batchKey: "z@99#0", aliasOf: "a@10#0", text: GOOD, cost: 0 });
  });

  test("trivial batches stay raw without a call", async () => {
    const { complete, calls } = fakeComplete(() => scriptedStream(resultMessage(GOOD)));
    const [s] = await summarizeBatches({ batches: [batch("a@10#0", "ls", "a.ts\nb.ts")], complete, model: "m", timeouts, timers: new ManualTimers() });
    expect(calls).toHaveLength(0);
    expect(s).toMatchObject({ source: "raw", text: "", skippedTrivial: true });
  });

  test("progress counts the batches that need a call", async () => {
    const seen: SummaryProgress[] = [];
    const { complete } = fakeComplete(() => scriptedStream(resultMessage(GOOD)));
    const batches = [batch("a@10#0"), batch("b@20#0", "npm test"), batch("t@30#0", "ls", "x"), batch("c@40#0")];
    await summarizeBatches({ batches, complete, model: "m", timeouts, timers: new ManualTimers(), onProgress: (p) => seen.push(p) });
    expect(seen.map((p) => p.label)).toEqual(["summarizing 0/2 batches…", "summarizing 1/2 batches…", "summarizing 2/2 batches…"]);
  });

  test("every batch resolves even when all calls hang (concurrency 2, three batches)", async () => {
    const timers = new ManualTimers();
    const { complete, calls } = fakeComplete(() => hangingStream());
    const batches = [batch("a@10#0"), batch("b@20#0", "npm test"), batch("c@30#0", "npm run lint")];
    const pending = summarizeBatches({ batches, complete, model: "m", timeouts, timers, concurrency: 2 });
    for (let i = 0; i < 4; i++) {
      await flush();
      timers.advance(1_000);
    }
    const out = await pending;
    expect(calls).toHaveLength(3);
    expect(out.map((s) => s.fallbackReason)).toEqual(["idle-timeout", "idle-timeout", "idle-timeout"]);
  });
});
