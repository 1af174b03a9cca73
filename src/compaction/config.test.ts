import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { isInStartWindow, readCompactionEnv, startWindowBounds } from "./config.ts";

describe("readCompactionEnv", () => {
  test("defaults when nothing is set", () => {
    expect(readCompactionEnv({})).toEqual({ config: { enabled: true, startRatio: 0.8, timeoutMs: 300_000, waitMs: 60_000, stallMs: 1_000, adaptiveStart: true }, diagnostics: [] });
  });

  test("explicit values", () => {
    const { config, diagnostics } = readCompactionEnv({
      PI_ASYNC_PREFIX_COMPACTION: "0",
      PI_ASYNC_PREFIX_COMPACTION_START_RATIO: "0.5",
      PI_ASYNC_PREFIX_COMPACTION_TIMEOUT_MS: "0",
      PI_ASYNC_PREFIX_COMPACTION_WAIT_MS: "1500",
      PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE: "0",
      PI_ASYNC_PREFIX_COMPACTION_STALL_MS: "250",
    });
    expect(config).toEqual({ enabled: false, startRatio: 0.5, timeoutMs: 0, waitMs: 1500, stallMs: 250, adaptiveStart: false });
    expect(diagnostics).toEqual([]);
  });

  test("the trace file is read when set and absent otherwise", () => {
    expect(readCompactionEnv({ PI_ASYNC_PREFIX_COMPACTION_TRACE: " /tmp/trace.jsonl " }).config.traceFile).toBe("/tmp/trace.jsonl");
    expect("traceFile" in readCompactionEnv({ PI_ASYNC_PREFIX_COMPACTION_TRACE: "  " }).config).toBe(false);
  });

  // pi-async-compaction's semantics: the ratio is clamped to [0, 1], the timeout floored, and a
  // negative timeout (like 0) disables it. None of these is an error.
  test.each([
    ["PI_ASYNC_PREFIX_COMPACTION_START_RATIO", "1.5", "startRatio", 1],
    ["PI_ASYNC_PREFIX_COMPACTION_START_RATIO", "0", "startRatio", 0],
    ["PI_ASYNC_PREFIX_COMPACTION_START_RATIO", "-2", "startRatio", 0],
    ["PI_ASYNC_PREFIX_COMPACTION_TIMEOUT_MS", "-1", "timeoutMs", 0],
    ["PI_ASYNC_PREFIX_COMPACTION_TIMEOUT_MS", "12.5", "timeoutMs", 12],
    ["PI_ASYNC_PREFIX_COMPACTION_WAIT_MS", "-5", "waitMs", 0],
    ["PI_ASYNC_PREFIX_COMPACTION_STALL_MS", "-5", "stallMs", -1],
    ["PI_ASYNC_PREFIX_COMPACTION_STALL_MS", "0", "stallMs", 0],
  ] as const)("%s=%s is read as the anchor reads it, without a diagnostic", (key, value, field, expected) => {
    const { config, diagnostics } = readCompactionEnv({ [key]: value });
    expect(config[field]).toBe(expected);
    expect(diagnostics).toEqual([]);
  });

  test("start ratio 0 starts at any usage; 1 never starts on its own", () => {
    const base = { contextWindow: 100_000, reserveTokens: 10_000 };
    expect(isInStartWindow({ ...base, startRatio: 0, tokens: 1 })).toBe(true);
    fc.assert(fc.property(fc.integer({ min: 0, max: 200_000 }), (tokens) => !isInStartWindow({ ...base, startRatio: 1, tokens })));
  });

  test.each([
    ["PI_ASYNC_PREFIX_COMPACTION_START_RATIO", "abc", "startRatio", 0.8],
    ["PI_ASYNC_PREFIX_COMPACTION_TIMEOUT_MS", "soon", "timeoutMs", 300_000],
    ["PI_ASYNC_PREFIX_COMPACTION", "maybe", "enabled", true],
  ] as const)("%s=%s falls back for that key only, with a diagnostic", (key, value, field, fallback) => {
    const env = { PI_ASYNC_PREFIX_COMPACTION_TIMEOUT_MS: "1000", PI_ASYNC_PREFIX_COMPACTION_START_RATIO: "0.6", [key]: value };
    const { config, diagnostics } = readCompactionEnv(env);
    expect(config[field]).toBe(fallback);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0].key).toBe(key);
    expect(diagnostics[0].message).toContain(value);
    // The other keys keep their valid values.
    if (field !== "timeoutMs") expect(config.timeoutMs).toBe(1000);
    if (field !== "startRatio") expect(config.startRatio).toBe(0.6);
  });
});

describe("start window", () => {
  // window 200_000, ratio 0.8 -> lower = 160_000; reserve 16_384 -> upper = 183_616.
  const base = { contextWindow: 200_000, startRatio: 0.8, reserveTokens: 16_384 };
  test.each([
    [160_000, false],
    [160_001, true],
    [183_616, true],
    [183_617, false],
    [null, false],
  ] as const)("tokens %p -> %p", (tokens, expected) => {
    expect(isInStartWindow({ ...base, tokens })).toBe(expected);
  });

  test("floor of window x ratio", () => {
    // 1001 * 0.5 = 500.5 -> 500
    expect(startWindowBounds({ contextWindow: 1001, startRatio: 0.5, reserveTokens: 100 })).toEqual({ lower: 500, upper: 901 });
  });

  test("empty window when reserve exceeds the early threshold", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300_000 }), (tokens) =>
        !isInStartWindow({ tokens, contextWindow: 100_000, startRatio: 0.9, reserveTokens: 20_000 }),
      ),
    );
  });
});
