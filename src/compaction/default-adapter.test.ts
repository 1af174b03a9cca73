/**
 * The default adapter end to end in-process: our preparation, Pi's real `compact()` with
 * pi-ai's faux provider as the stream, and the result in Pi's shape.
 */
import { describe, expect, test } from "bun:test";
import { createFauxCore, fauxAssistantMessage } from "@earendil-works/pi-ai";
import { compact, DEFAULT_COMPACTION_SETTINGS, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { createDefaultAdapter, type PiCompactFn } from "./default-adapter.ts";
import { createRunSpendMeter } from "./run-spend.ts";
import { piCompactionPrimitives } from "../host/compaction-runtime.ts";
import { SessionBuilder } from "../../test/support/compaction/session-builder.ts";

function session() {
  const b = new SessionBuilder();
  for (let i = 0; i < 5; i++)
    b.applyAll([
      { op: "user", chars: 300 },
      { op: "tool_loop", tool: "read", path: `src/f${i}.ts`, resultChars: 3000 },
      { op: "tool_loop", tool: "edit", path: "src/main.ts", resultChars: 100 },
      { op: "reply", chars: 400 },
    ]);
  return b.sm;
}

describe("default adapter", () => {
  test("prepare -> run through Pi's compact() -> toCompaction", async () => {
    const faux = createFauxCore({ models: [{ id: "faux-sum", contextWindow: 100_000 }] });
    // Two responses: a split turn asks for a history summary and a turn-prefix summary.
    faux.setResponses([fauxAssistantMessage("## Goal\nSummarised by faux"), fauxAssistantMessage("turn prefix by faux")]);
    const seen: { apiKey?: string; signal?: AbortSignal }[] = [];
    const compactWithFaux: PiCompactFn = (prep, model, apiKey, headers, ci, signal, tl, _stream, env) => {
      seen.push({ apiKey, signal });
      return compact(prep, model, apiKey, headers, ci, signal, tl, faux.streamSimple as never, env);
    };
    const adapter = createDefaultAdapter({ compact: compactWithFaux, primitives: piCompactionPrimitives });
    const sm = session();
    const settings = { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 1500 };
    const prepared = adapter.prepare({ branch: sm.getBranch(), settings, ctx: {} as ExtensionContext });
    expect(prepared).toBeDefined();
    const ctx = { modelRegistry: { getApiKeyAndHeaders: async () => ({ ok: true, apiKey: "k-123", headers: {} }) } } as unknown as ExtensionContext;
    const abort = new AbortController();
    const out = await adapter.run(prepared!, { ctx, model: faux.getModel() as never, signal: abort.signal, thinkingLevel: "off" });
    const result = adapter.toCompaction(out, prepared!);
    // A split turn: the history and turn-prefix summaries are asked for at once (split-parallel.ts).
    expect(prepared!.isSplitTurn && prepared!.messagesToSummarize.length > 0).toBe(true);
    expect(seen).toEqual([{ apiKey: "k-123", signal: abort.signal }, { apiKey: "k-123", signal: abort.signal }]);
    expect(result.summary.startsWith("## Goal\nSummarised by faux")).toBe(true);
    // Pi appends its file-operation tags: edited main.ts is modified, read files are read-only.
    expect(result.summary).toContain("<modified-files>\nsrc/main.ts\n</modified-files>");
    expect(result.firstKeptEntryId).toBe(prepared!.firstKeptEntryId);
    expect(result.details).toMatchObject({ modifiedFiles: ["src/main.ts"] });
  });

  test("metered: both calls of a split turn go through Pi's model runtime and the meter, their usage summed as on the result", async () => {
    const faux = createFauxCore({ models: [{ id: "faux-sum", contextWindow: 100_000 }] });
    faux.setResponses([fauxAssistantMessage("## Goal\nSummarised by faux"), fauxAssistantMessage("turn prefix by faux")]);
    const adapter = createDefaultAdapter({ compact, primitives: piCompactionPrimitives });
    const sm = session();
    const prepared = adapter.prepare({ branch: sm.getBranch(), settings: { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 1500 }, ctx: {} as ExtensionContext })!;
    let runtimeCalls = 0;
    const ctx = {
      modelRegistry: {
        getApiKeyAndHeaders: async () => ({ ok: true, apiKey: "k-123", headers: {} }),
        streamSimple: (m: never, c: never, o: never) => {
          runtimeCalls++;
          return faux.streamSimple(m, c, o);
        },
      },
    } as unknown as ExtensionContext;
    const meter = createRunSpendMeter();
    const out = await adapter.run(prepared, { ctx, model: faux.getModel() as never, signal: new AbortController().signal, thinkingLevel: "off", meter });
    const result = adapter.toCompaction(out, prepared);
    expect(runtimeCalls).toBe(2);
    const usage = result.usage as { input: number; output: number; cacheRead: number; cacheWrite: number; cost: { total: number } };
    expect(usage.input + usage.output).toBeGreaterThan(0);
    expect(meter.spend()).toEqual({ calls: 2, inputTokens: usage.input + usage.cacheRead + usage.cacheWrite, outputTokens: usage.output, cost: usage.cost.total });
  });

  test("missing credentials fail the run", async () => {
    const adapter = createDefaultAdapter({ compact: (() => Promise.reject(new Error("unreachable"))) as unknown as PiCompactFn, primitives: piCompactionPrimitives });
    const sm = session();
    const prepared = adapter.prepare({ branch: sm.getBranch(), settings: { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 1500 }, ctx: {} as ExtensionContext })!;
    const ctx = { modelRegistry: { getApiKeyAndHeaders: async () => ({ ok: false, error: "not logged in" }) } } as unknown as ExtensionContext;
    await expect(adapter.run(prepared, { ctx, model: { provider: "p", id: "m" } as never, signal: new AbortController().signal, thinkingLevel: "off" })).rejects.toThrow("not logged in");
  });
});
