/** The host's cache readings (cache-edge.ts) over the engine's ledger and wire log, with a fake Pi: seam placement, facts, attribution, warming override. */
import { describe, expect, test } from "bun:test";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { WireMessage, WireRequestBody } from "../cache/wire-types.ts";
import { cacheViewOf, coldVerdictOf, initialEngineState, step, type EngineState, type FlushResult } from "../engine/index.ts";
import type { DisciplineOutcome } from "../engine/decide.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import { formatCacheView } from "../ui/cache-view.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { cacheKeyOf, liveCacheRule, liveFacts, liveTtlMs } from "./cache-edge.ts";

const M = { type: "ephemeral" as const };
const big = (tag: string) => `${tag} `.repeat(3000);

function setup(over: { settings?: KeeperSettings; frozen?: number } = {}) {
  let clock = 1_000_000;
  let tools = ["read"];
  const settings = over.settings ?? DEFAULT_SETTINGS;
  const withFrozen = (ts: number | undefined): KeeperState => ({ ...emptyState(), frontier: { ...emptyState().frontier, ...(ts !== undefined ? { frozenThroughTimestamp: ts } : {}) } });
  let state: EngineState = initialEngineState({ keeper: withFrozen(over.frozen) });
  const pi = { getThinkingLevel: () => "medium", getActiveTools: () => tools } as never;
  const ctx = {
    model: { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" },
    getContextUsage: () => ({ tokens: 50_000, contextWindow: 200_000, percent: 25 }),
  } as unknown as ExtensionContext;
  // The engine's steps as the host's cache part steps them (keeper-host.ts), with this file's Pi readings.
  const rt = {
    onContextRendered(messages: ContextMessage[]) {
      state = { ...state, lastRender: { raw: messages, rendered: messages, state: state.keeper } };
    },
    onBeforeProviderRequest(payload: unknown, c: ExtensionContext) {
      const model = c.model ? { api: c.model.api, id: c.model.id } : undefined;
      const out = step(state, { type: "before-request", settings, model, payload, key: cacheKeyOf(pi, c, clock), rule: liveCacheRule(c) });
      state = out.state;
      return out.request?.body;
    },
    onAssistantMessage: (m: ContextMessage) => void (state = step(state, { type: "usage", message: m }).state),
    onCacheWarmingDecision: (decision: { warmCost: number; missCost: number; continuationProbability: number; action: "warm" | "stop" }) => {
      const out = step(state, { type: "warming", settings, decision });
      state = out.state;
      return out.warming ? { action: "stop" as const } : undefined;
    },
    facts: (c: ExtensionContext) => liveFacts(state, pi, c, clock),
    coldVerdict: (c: ExtensionContext) => coldVerdictOf(state.ledger, cacheKeyOf(pi, c, clock), liveTtlMs(c)),
    recordFlush(outcome: DisciplineOutcome, rewrote: boolean) {
      const result = { outcome, rewrote, nextState: state.keeper, nextRecall: undefined, entries: [], spills: [], decisions: [], plan: { entriesToPersist: [] } } as unknown as FlushResult;
      state = step(state, { type: "flush-written", result, failed: [], contextTokens: undefined }).state;
    },
    cacheText: () => formatCacheView(cacheViewOf(state.wire, state.keeper.stats.rewritesCaused), { detail: true }),
  };
  const setFrozen = (ts: number) => (state = { ...state, keeper: withFrozen(ts) });
  return { rt, ctx, tick: (ms: number) => (clock += ms), setTools: (t: string[]) => (tools = t), setFrozen };
}

// Rendered history: p1, a read loop (two steps), the answer, p2.
const rendered: ContextMessage[] = [
  user("p1", 1),
  assistant([call("a", "read")], 2),
  result("a", "read", big("A"), 3),
  assistant([call("b", "read")], 4),
  result("b", "read", big("B"), 5),
  assistant([text("done")], 6),
  user("p2", 7),
];
function payload(resultB = big("B")): WireRequestBody {
  const messages: WireMessage[] = [
    { role: "user", content: [{ type: "text", text: "p1" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "a", name: "read", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: big("A") }] },
    { role: "assistant", content: [{ type: "tool_use", id: "b", name: "read", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "b", content: resultB }] },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
    { role: "user", content: [{ type: "text", text: "p2", cache_control: M }] },
  ];
  return { model: "claude-sonnet-4-5", max_tokens: 8000, tools: [{ name: "read", cache_control: M }], system: [{ type: "text", text: "sys", cache_control: M }], messages };
}
const markedMessages = (b: WireRequestBody) =>
  b.messages.flatMap((m, i) => (Array.isArray(m.content) && m.content.some((x) => (x as { cache_control?: unknown }).cache_control) ? [i] : []));

describe("cache edge (host) over the engine ledger", () => {
  test("enabled: false leaves every payload alone and records nothing", () => {
    const { rt, ctx } = setup({ settings: { ...DEFAULT_SETTINGS, enabled: false }, frozen: 3 });
    rt.onContextRendered(rendered);
    expect(rt.onBeforeProviderRequest(payload(), ctx)).toBeUndefined();
    expect(rt.cacheText()).toContain("No request seen yet");
  });

  test("places the seam on the wire message of the last frozen message; 4 marks; the input payload is not mutated", () => {
    const { rt, ctx } = setup({ frozen: 3 }); // frozen through result a (ts 3) → wire message 2
    rt.onContextRendered(rendered);
    const input = payload();
    const before = JSON.stringify(input);
    const out = rt.onBeforeProviderRequest(input, ctx) as WireRequestBody;
    expect(out).toBeDefined();
    expect(JSON.stringify(input)).toBe(before);
    expect(markedMessages(out)).toEqual([2, 6]);
    expect(rt.cacheText()).toContain("frozen");
  });

  test("no frozen boundary, or the seam off: the payload is unchanged", () => {
    const { rt, ctx } = setup();
    rt.onContextRendered(rendered);
    expect(rt.onBeforeProviderRequest(payload(), ctx)).toBeUndefined();
    const off = setup({ settings: { ...DEFAULT_SETTINGS, cache: { ...DEFAULT_SETTINGS.cache, seam: false } }, frozen: 3 });
    off.rt.onContextRendered(rendered);
    expect(off.rt.onBeforeProviderRequest(payload(), off.ctx)).toBeUndefined();
  });

  test("a request that re-writes after the seam keeps the previous seam; the next one moves it; attribution names the flush", () => {
    const { rt, ctx, tick, setFrozen } = setup({ frozen: 3 });
    rt.onContextRendered(rendered);
    rt.onBeforeProviderRequest(payload(), ctx);
    // A flush stubs result b (wire 4, after the seam at 2) and moves the boundary to ts 5 (wire 4).
    rt.recordFlush({ log: [], pending: undefined } as unknown as DisciplineOutcome, true);
    setFrozen(5);
    tick(10_000);
    const rewritten = rt.onBeforeProviderRequest(payload("[stub]"), ctx) as WireRequestBody;
    expect(markedMessages(rewritten)).toEqual([2, 6]); // the entry at the old seam is what this request reads
    expect(rt.cacheText()).toContain("keeper-rewrite");
    tick(10_000);
    const extended = rt.onBeforeProviderRequest(payload("[stub]"), ctx) as WireRequestBody;
    expect(markedMessages(extended)).toEqual([4, 6]); // nothing changed: the seam moves for free
  });

  test("facts: warm within the TTL, cold after it or when the tools change", () => {
    const { rt, ctx, tick, setTools } = setup({ frozen: 3 });
    rt.onContextRendered(rendered);
    expect(rt.facts(ctx).cold).toBe(true); // nothing sent yet in this process
    rt.onBeforeProviderRequest(payload(), ctx);
    tick(60_000);
    const warm = rt.facts(ctx);
    expect(warm.cold).toBe(false);
    expect(warm.requestTimes).toHaveLength(1);
    expect(warm.seamActive).toBe(true);
    expect(warm.context).toEqual({ tokens: 50_000, window: 200_000 });
    setTools(["read", "bash"]);
    expect(rt.coldVerdict(ctx).reasons).toEqual(["tools-changed"]);
    setTools(["read"]);
    tick(5 * 60_000);
    expect(rt.coldVerdict(ctx).reasons).toEqual(["ttl-expired"]);
  });

  test("a warm-up ping (max_tokens 1) refreshes the TTL but is not a request of the session", () => {
    const { rt, ctx, tick } = setup();
    rt.onContextRendered(rendered);
    rt.onBeforeProviderRequest(payload(), ctx);
    tick(4 * 60_000);
    rt.onBeforeProviderRequest({ ...payload(), max_tokens: 1 }, ctx);
    tick(4 * 60_000);
    const f = rt.facts(ctx);
    expect(f.cold).toBe(false);
    expect(f.requestTimes).toHaveLength(1);
  });

  test("cache warming stops when a waiting rewrite would discard most of the prefix", () => {
    const { rt } = setup();
    const event = { warmCost: 0.01, missCost: 0.2, continuationProbability: 0.5, action: "warm" as const };
    expect(rt.onCacheWarmingDecision(event)).toBeUndefined();
    // keeps 10% of the prefix: 0.5 × 0.2 × 0.1 − 0.01 = 0 < 0.05 → stop
    rt.recordFlush({ log: [], pending: { keptPrefixTokens: 1000, cachedPrefixTokens: 10_000 } } as unknown as DisciplineOutcome, false);
    expect(rt.onCacheWarmingDecision(event)).toEqual({ action: "stop" });
    // keeps 90%: 0.5 × 0.2 × 0.9 − 0.01 = 0.08 ≥ 0.05 → Pi decides
    rt.recordFlush({ log: [], pending: { keptPrefixTokens: 9000, cachedPrefixTokens: 10_000 } } as unknown as DisciplineOutcome, false);
    expect(rt.onCacheWarmingDecision(event)).toBeUndefined();
  });

  test("cache warming stops while a rewrite this extension applied waits for the next request; the request that carries it ends that", () => {
    const { rt, ctx } = setup();
    const event = { warmCost: 0.01, missCost: 0.2, continuationProbability: 0.5, action: "warm" as const };
    rt.onContextRendered(rendered);
    rt.onBeforeProviderRequest(payload(), ctx);
    // A request-end flush applied a rewrite that keeps 5% of the cached prefix; nothing is held back.
    rt.recordFlush({ log: [], pending: undefined, unsent: { keptPrefixTokens: 500, cachedPrefixTokens: 10_000 } } as unknown as DisciplineOutcome, true);
    expect(rt.onCacheWarmingDecision(event)).toEqual({ action: "stop" });
    // Pi's own warm ping (max_tokens 1) replays the old request: the rewrite still waits.
    rt.onBeforeProviderRequest({ ...payload(), max_tokens: 1 }, ctx);
    expect(rt.onCacheWarmingDecision(event)).toEqual({ action: "stop" });
    // The next real request carries it: what it wrote is worth warming again.
    rt.onBeforeProviderRequest(payload(), ctx);
    expect(rt.onCacheWarmingDecision(event)).toBeUndefined();
    expect(rt.cacheText()).toContain("Cache warming: Pi was about to refresh the cached prefix 3 times; this extension stopped 2 of them — 2 because a rewrite of history it had decided would discard most of the warmed prefix.");
  });

  test("counts an unannounced loss: the request extended the previous one, yet read little", () => {
    const { rt, ctx, tick } = setup();
    rt.onContextRendered(rendered);
    const usage = (cacheRead: number, cacheWrite: number) =>
      ({ ...assistant([text("x")], 0), usage: { input: 5, output: 5, cacheRead, cacheWrite, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } }) as ContextMessage;
    rt.onBeforeProviderRequest(payload(), ctx);
    rt.onAssistantMessage(usage(0, 8000));
    tick(30_000);
    const longer = payload();
    longer.messages.push({ role: "assistant", content: [{ type: "text", text: "ok" }] }, { role: "user", content: "p3" });
    rt.onContextRendered([...rendered, assistant([text("ok")], 8), user("p3", 9)]);
    rt.onBeforeProviderRequest(longer, ctx);
    rt.onAssistantMessage(usage(100, 8100)); // read 100 < 0.5 × 8,005
    expect(rt.facts(ctx).observedLosses).toEqual({ prompt: { requests: 1, losses: 1 }, loop: { requests: 0, losses: 0 } });
  });

  describe("the session model's cache rule and prices (ctx.model)", () => {
    const gpt = { provider: "openai", id: "gpt-5.5", api: "openai-responses", cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 } };
    const withModel = (c: ExtensionContext, model: unknown) => ({ ...c, model }) as unknown as ExtensionContext;

    test("facts carry the cost model and the rule's lifetime: OpenAI entries live 10 minutes, Anthropic's 5", () => {
      const { rt, ctx, tick } = setup();
      const openai = withModel(ctx, gpt);
      expect(rt.facts(ctx).costModel?.rule.family).toBe("anthropic");
      expect(rt.facts(ctx).ttlMs).toBe(5 * 60_000);
      const f = rt.facts(openai);
      expect(f.costModel?.rule.family).toBe("openai");
      expect(f.costModel?.pricing).toMatchObject({ write5m: 1, read: 0.1, output: 6 });
      expect(f.ttlMs).toBe(10 * 60_000);
      rt.onContextRendered(rendered);
      rt.onBeforeProviderRequest(payload(), openai);
      tick(7 * 60_000);
      expect(rt.facts(openai).cold).toBe(false);
      expect(rt.coldVerdict(openai).cold).toBe(false);
      tick(4 * 60_000);
      expect(rt.coldVerdict(openai).reasons).toEqual(["ttl-expired"]);
    });

    test("long retention: OpenAI's 24 hours, Anthropic's 1 hour", () => {
      const saved = process.env.PI_CACHE_RETENTION;
      process.env.PI_CACHE_RETENTION = "long";
      try {
        const { rt, ctx } = setup();
        expect(rt.facts(withModel(ctx, gpt))).toMatchObject({ ttlMs: 24 * 60 * 60_000, ttl: "1h" });
        expect(rt.facts(ctx)).toMatchObject({ ttlMs: 60 * 60_000, ttl: "1h" });
      } finally {
        if (saved === undefined) delete process.env.PI_CACHE_RETENTION;
        else process.env.PI_CACHE_RETENTION = saved;
      }
    });

    test("bust attribution prices a re-write at the model's write price: plain input on OpenAI", () => {
      const costOf = (model: unknown): number => {
        const { rt, ctx, tick } = setup({ frozen: 3 });
        const c = withModel(ctx, model);
        rt.onContextRendered(rendered);
        rt.onBeforeProviderRequest(payload(), c);
        rt.recordFlush({ log: [], pending: undefined } as unknown as DisciplineOutcome, true);
        tick(10_000);
        rt.onBeforeProviderRequest(payload("[stub]"), c);
        const line = rt.cacheText().split("\n").find((l: string) => l.includes("keeper-rewrite") && l.includes("≈"));
        return Number(line!.match(/≈ ([\d,]+)/)![1]!.replace(/,/g, ""));
      };
      const anthropic = costOf({ provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" });
      const openai = costOf(gpt);
      expect(anthropic).toBeGreaterThan(0);
      // (1 − 0.1) against (1.25 − 0.1) per re-written token, up to the display's rounding.
      expect(Math.abs(openai - (anthropic * 0.9) / 1.15)).toBeLessThanOrEqual(1);
    });
  });
});
