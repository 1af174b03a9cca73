/** The fake server's prefix cache model, with figures worked out by hand. */
import { describe, expect, test } from "bun:test";
import { planUsage, type CacheEntry, type WireRequest } from "../support/fake-anthropic/index.ts";

const EPH = { cache_control: { type: "ephemeral" } };

/** A text block whose JSON without cache_control is exactly `chars` long. */
function sized(chars: number, mark = false) {
  // JSON: {"type":"text","text":"…"} has 25 characters of framing.
  const text = "a".repeat(chars - 25);
  return { type: "text", text, ...(mark ? EPH : {}) };
}

function body(messages: WireRequest["messages"]): WireRequest {
  return { model: "m", system: [sized(400, true)], messages };
}

function apply(cache: Map<string, CacheEntry>, store: Array<[string, CacheEntry]>) {
  for (const [k, v] of store) cache.set(k, v);
}

describe("planUsage", () => {
  test("first request writes, the extended request reads the old prefix and writes the rest", () => {
    expect(JSON.stringify(sized(400)).length).toBe(400);
    const cache = new Map<string, CacheEntry>();
    const m1 = { role: "user", content: [sized(800, true)] };
    // tokens: system 400/4 = 100, m1 800/4 = 200 → total 300; breakpoints at 100 and 300.
    const first = planUsage({ body: body([m1]), cache, nowMs: 0, minCacheableTokens: 0 });
    expect(first.totalTokens).toBe(300);
    expect(first.usage).toEqual({ input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 300 });
    apply(cache, first.store);

    // Second request: m1 loses its mark (it moved to the new last block), an assistant turn of
    // 400 chars (100) and a user turn of 1200 chars (300) follow → total 700.
    const m1plain = { role: "user", content: [sized(800)] };
    const a = { role: "assistant", content: [sized(400)] };
    const u = { role: "user", content: [sized(1200, true)] };
    const second = planUsage({ body: body([m1plain, a, u]), cache, nowMs: 1000, minCacheableTokens: 0 });
    // the last breakpoint looks back 2 blocks and finds the 300-token prefix: read 300, write 400.
    expect(second.usage).toEqual({ input_tokens: 0, cache_read_input_tokens: 300, cache_creation_input_tokens: 400 });
  });

  test("changing an old message busts everything after the system block", () => {
    const cache = new Map<string, CacheEntry>();
    const m1 = { role: "user", content: [sized(800, true)] };
    apply(cache, planUsage({ body: body([m1]), cache, nowMs: 0, minCacheableTokens: 0 }).store);
    const changed = { role: "user", content: [{ ...sized(800, true), text: "b".repeat(775) }] };
    const plan = planUsage({ body: body([changed]), cache, nowMs: 1, minCacheableTokens: 0 });
    // only the 100-token system prefix still matches; the 200-token message is written again.
    expect(plan.usage).toEqual({ input_tokens: 0, cache_read_input_tokens: 100, cache_creation_input_tokens: 200 });
  });

  test("prefixes below the minimum are not cached, and expired entries do not hit", () => {
    const cache = new Map<string, CacheEntry>();
    const m1 = { role: "user", content: [sized(800, true)] };
    const small = planUsage({ body: body([m1]), cache, nowMs: 0, minCacheableTokens: 1024 });
    expect(small.usage).toEqual({ input_tokens: 300, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    expect(small.store).toHaveLength(0);
    apply(cache, planUsage({ body: body([m1]), cache, nowMs: 0, minCacheableTokens: 0 }).store);
    const later = planUsage({ body: body([m1]), cache, nowMs: 5 * 60_000 + 1, minCacheableTokens: 0 });
    expect(later.usage.cache_read_input_tokens).toBe(0);
  });

  test("a breakpoint more than 20 blocks after the cached prefix misses", () => {
    const cache = new Map<string, CacheEntry>();
    const first = [{ role: "user", content: [sized(400, true)] }];
    apply(cache, planUsage({ body: { model: "m", messages: first }, cache, nowMs: 0, minCacheableTokens: 0 }).store);
    const grow = (n: number) => ({
      model: "m",
      messages: [{ role: "user", content: [sized(400), ...Array.from({ length: n }, (_, i) => sized(100, i === n - 1))] }],
    });
    // 19 new blocks: the mark sits 19 positions after the cached one → inside the 20-block window.
    expect(planUsage({ body: grow(19), cache, nowMs: 1, minCacheableTokens: 0 }).usage.cache_read_input_tokens).toBe(100);
    // 20 new blocks: 20 positions back is outside the window (positions bp … bp−19).
    expect(planUsage({ body: grow(20), cache, nowMs: 1, minCacheableTokens: 0 }).usage.cache_read_input_tokens).toBe(0);
  });
});
