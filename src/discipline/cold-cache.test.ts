import { describe, expect, test } from "bun:test";
import { detectColdCache, warmingOverride, type CacheKeySnapshot } from "./cold-cache.ts";

const MIN = 60_000;
const snap = (at: number, over: Partial<CacheKeySnapshot> = {}): CacheKeySnapshot => ({
  at,
  model: "anthropic/claude-sonnet-4-5",
  thinkingLevel: "medium",
  toolsDigest: "t1",
  ...over,
});

describe("detectColdCache", () => {
  test("within the TTL and nothing changed: warm", () => {
    expect(detectColdCache({ previous: snap(0), current: snap(4 * MIN) })).toMatchObject({ cold: false, reasons: [], gapMs: 4 * MIN });
  });
  test("a gap over 5 minutes is cold by default, warm with long retention", () => {
    expect(detectColdCache({ previous: snap(0), current: snap(6 * MIN) })).toMatchObject({ cold: true, reasons: ["ttl-expired"] });
    expect(detectColdCache({ previous: snap(0), current: snap(6 * MIN), longRetention: true }).cold).toBe(false);
    expect(detectColdCache({ previous: snap(0), current: snap(61 * MIN), longRetention: true }).reasons).toEqual(["ttl-expired"]);
  });
  test("exactly the TTL is still warm", () => {
    expect(detectColdCache({ previous: snap(0), current: snap(5 * MIN) }).cold).toBe(false);
  });
  test("model, thinking and tool changes each make it cold, and are all named", () => {
    expect(detectColdCache({ previous: snap(0), current: snap(1000, { model: "anthropic/claude-opus-4-5" }) }).reasons).toEqual(["model-changed"]);
    expect(detectColdCache({ previous: snap(0), current: snap(1000, { thinkingLevel: "off" }) }).reasons).toEqual(["thinking-changed"]);
    // a level change with thinking on both times keeps the cache (seen in the recorded corpus)
    expect(detectColdCache({ previous: snap(0), current: snap(1000, { thinkingLevel: "high" }) }).cold).toBe(false);
    expect(detectColdCache({ previous: snap(0), current: snap(1000, { toolsDigest: "t2" }) }).reasons).toEqual(["tools-changed"]);
    expect(detectColdCache({ previous: snap(0), current: snap(10 * MIN, { toolsDigest: "t2", thinkingLevel: "off" }) }).reasons).toEqual([
      "ttl-expired",
      "thinking-changed",
      "tools-changed",
    ]);
  });
  test("no previous request: cold", () => {
    expect(detectColdCache({ previous: undefined, current: snap(0) })).toMatchObject({ cold: true, reasons: ["no-previous-request"] });
  });
  test("an explicit TTL wins", () => {
    expect(detectColdCache({ previous: snap(0), current: snap(2 * MIN), ttlMs: MIN }).cold).toBe(true);
  });
});

describe("warmingOverride", () => {
  const warm = { warmCost: 0.02, missCost: 0.5, continuationProbability: 0.9, action: "warm" as const };
  test("no pending rewrite, or Pi already stopping: no override", () => {
    expect(warmingOverride({ event: warm })).toBeUndefined();
    expect(warmingOverride({ event: warm, pendingRewrite: false })).toBeUndefined();
    expect(warmingOverride({ event: { ...warm, action: "stop" }, pendingRewrite: true })).toBeUndefined();
  });
  test("a rewrite that discards the prefix stops warming", () => {
    expect(warmingOverride({ event: warm, pendingRewrite: true })?.action).toBe("stop");
  });
  test("a rewrite that keeps little of the prefix stops warming", () => {
    // kept 10%: 0.9 × 0.5 × 0.1 − 0.02 = 0.025 < 0.05 → stop
    expect(warmingOverride({ event: warm, pendingRewrite: { keptPrefixTokens: 10_000, cachedPrefixTokens: 100_000 } })?.action).toBe("stop");
  });
  test("a rewrite that keeps most of the prefix lets warming go on", () => {
    // kept 80%: 0.9 × 0.5 × 0.8 − 0.02 = 0.34 ≥ 0.05 → no override
    expect(warmingOverride({ event: warm, pendingRewrite: { keptPrefixTokens: 80_000, cachedPrefixTokens: 100_000 } })).toBeUndefined();
  });
});
