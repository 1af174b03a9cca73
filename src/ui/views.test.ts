/** The texts users read: /keeper, the status line, /keeper why, /keeper cache, /keeper stats and now. */
import { describe, expect, test } from "bun:test";
import { appendGateDecision, emptyGateDecisionLog } from "../discipline/gate-log.ts";
import { priceFlush } from "../discipline/gate.ts";
import { emptyRewriteTally, tallyFlushRewrite, tallyRequest } from "../discipline/rewrite-tally.ts";
import type { BustAttribution } from "../discipline/schema.ts";
import { applyOverrides, withOverride } from "../settings/overrides.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { emptyState } from "../state/schema.ts";
import { formatCacheView, cacheSummary } from "./cache-view.ts";
import { formatKeeperView } from "./keeper-view.ts";
import { flushOutcomeLine, formatStats, nothingToFlush } from "./pruning-view.ts";
import { formatStatusLine, formatTokenCount } from "./status-line.ts";
import { formatWhyView, whySummary } from "./why-view.ts";

describe("/keeper marks what differs from the defaults", () => {
  const fileLayer = { source: "/home/u/.pi/agent/settings.json", partial: { pruning: { minBatchChars: 2000 }, thinkingStrip: { mode: "auto" } } };
  const fromFiles = applyOverrides(DEFAULT_SETTINGS, fileLayer.partial);

  test("all defaults: one line, no settings dump", () => {
    const text = formatKeeperView({ settings: DEFAULT_SETTINGS, sources: [], diagnostics: [], sections: [{ title: "pruning", lines: ["x"] }] });
    expect(text.split("\n")[0]).toBe("context-keeper: on");
    expect(text).toContain("settings: all defaults");
    expect(text).not.toContain("pruning.minBatchChars");
    expect(text).toContain("pruning:\n  x");
    const live = formatKeeperView({ settings: DEFAULT_SETTINGS, sources: [], diagnostics: [], sections: [], live: { contextTokens: 41_234, prunedTokens: 50_400 } });
    expect(live.split("\n").slice(1, 3)).toEqual(["now: 41,234 tokens in context (Pi's estimate)", 'kept out of the next request: ≈ 50,400 tokens (the status line\'s "−50k pruned")']);
  });

  test("file values and session overrides are listed with their origin; the rest is hidden", () => {
    const overrides = withOverride({}, "thinkingStrip.mode", "off");
    const text = formatKeeperView({
      settings: applyOverrides(fromFiles, overrides),
      sources: [fileLayer.source],
      diagnostics: [],
      layers: [fileLayer],
      overrides,
      warnings: ['summarizer.model "nope/x" was not found'],
      sections: [],
    });
    expect(text).toContain("settings from: defaults, then /home/u/.pi/agent/settings.json, then 1 session override");
    expect(text).toMatch(/ {3}pruning\.minBatchChars = 2000 +from \/home\/u\/\.pi\/agent\/settings\.json \(default 1200\)/);
    expect(text).toMatch(/ \* thinkingStrip\.mode = "off" +session override; \/home\/u\/\.pi\/agent\/settings\.json says "auto" \(default "auto"\)/);
    expect(text).toContain('warning: summarizer.model "nope/x" was not found');
    expect(text).not.toContain("cache.seam");
  });

  test("an untrusted project's settings: said instead of \"no contextKeeper in any settings file\"", () => {
    const ignored = [{ source: "/w/.pi/settings.json", reason: "project not trusted", setsKeeper: true }];
    const text = formatKeeperView({ settings: DEFAULT_SETTINGS, sources: [], diagnostics: [], layers: [], ignored, sections: [] });
    expect(text).toContain("settings from: defaults only\n");
    expect(text).not.toContain("no contextKeeper in any settings file");
    expect(text).toContain("the project's settings were ignored: project not trusted (/w/.pi/settings.json sets contextKeeper; to use them: /trust in Pi, then start it again, or pi --approve)");
    expect(formatKeeperView({ settings: DEFAULT_SETTINGS, sources: [], diagnostics: [], layers: [], sections: [] })).toContain("defaults only (no contextKeeper in any settings file)");
  });

  test("off for this session: said plainly, feature sections hidden", () => {
    const overrides = withOverride({}, "enabled", false);
    const text = formatKeeperView({ settings: applyOverrides(DEFAULT_SETTINGS, overrides), sources: [], diagnostics: [], overrides, sections: [{ title: "pruning", lines: ["x"] }] });
    expect(text.split("\n")[0]).toContain("off for this session (/keeper on turns it back on)");
    expect(text).not.toContain("pruning:");
  });
});

describe("status line", () => {
  test("label, Pi's context figure, the saving, summarizer spend, progress", () => {
    expect(formatStatusLine({ enabled: true, contextTokens: 41_234, prunedTokens: 50_400, summarizerCost: 0 })).toBe("keeper: 41k ctx · −50k pruned");
    expect(formatStatusLine({ enabled: true, contextTokens: 3_400, prunedTokens: 0, summarizerCost: 0.0123, progress: "summarizing 1/2 batches…" })).toBe(
      "keeper: 3.4k ctx · nothing pruned yet · summaries $0.012 · summarizing 1/2 batches…",
    );
    expect(formatStatusLine({ enabled: true, contextTokens: undefined, renderedTokens: 9_000, prunedTokens: 1, summarizerCost: 0 })).toBe("keeper: ~9.0k ctx · −1 pruned");
    expect(formatStatusLine({ enabled: false, contextTokens: 5, prunedTokens: 5, summarizerCost: 1 })).toBe("keeper: off");
  });
  test("token counts as Pi's footer prints them", () => {
    expect([999, 1_000, 9_949, 10_400, 999_499, 1_200_000, 12_000_000].map(formatTokenCount)).toEqual(["999", "1.0k", "9.9k", "10k", "999k", "1.2M", "12M"]);
  });
});

describe("/keeper why: one plain sentence first", () => {
  test("no decision yet", () => {
    expect(whySummary(emptyGateDecisionLog())).toContain("No flush has weighed a change to history yet");
  });
  test("a deferred rewrite is explained in words with units; numbers below", () => {
    const log = appendGateDecision(emptyGateDecisionLog(), {
      at: 120_000,
      label: "flush 3 (request-end)",
      mutationIds: ["stub:a"],
      position: 12,
      decision: priceFlush({ tokensRemoved: 8000, rewrittenTokens: 60_000, expectedRequests: 2.734375 }),
    });
    const text = formatWhyView(log);
    expect(text.split("\n")).toHaveLength(1);
    expect(text).toContain("Last decision (flush 3, at the end of a request): history left as it is for now");
    expect(text).toContain("≈ 8,000 tokens would save the price of ≈ 2,188 input tokens, less than re-writing 60,000 cached tokens costs (≈ 69,000)");
    expect(text).toContain("Of the last 1 decisions: 0 changed history, 1 waited. /keeper why --detail shows the arithmetic.");
    const detail = formatWhyView(log, { detail: true });
    expect(detail.startsWith(text.replace(" /keeper why --detail shows the arithmetic.", ""))).toBe(true);
    expect(detail).toContain("2.73 requests expected to read it");
  });
});

describe("/keeper why: reasoning a rewrite would drop", () => {
  const entry = (decision: ReturnType<typeof priceFlush>) => appendGateDecision(emptyGateDecisionLog(), { at: 120_000, label: "flush 4 (cold)", mutationIds: ["stub:a"], position: 3, decision });
  test("a cold cache whose rewrite would drop later thinking: waited, and why in words", () => {
    const text = formatWhyView(entry(priceFlush({ tokensRemoved: 800, rewrittenTokens: 60_000, expectedRequests: 5, cacheCold: true, reasoningDropped: 4_000 })));
    expect(text.split("\n")[0]).toContain("the cache was cold, but the change would make the provider drop ≈ 4,000 tokens of the model's later thinking (the price of ≈ 20,000 input tokens)");
    const detail = formatWhyView(entry(priceFlush({ tokensRemoved: 800, rewrittenTokens: 60_000, expectedRequests: 5, cacheCold: true, reasoningDropped: 4_000 })), { detail: true });
    expect(detail).toContain("thinking dropped = 4,000 tokens of the model's later thinking (reasoning bound to its prefix) × output 5.000 = 20,000");
    expect(detail).toContain("waited: the cache was cold, but the saving ≈");
  });
  test("no reasoning term on other models: no line about it", () => {
    expect(formatWhyView(entry(priceFlush({ tokensRemoved: 800, rewrittenTokens: 60_000, expectedRequests: 5 })))).not.toContain("thinking");
  });
});

describe("/keeper cache: reasoning the provider dropped", () => {
  test("a line only when Pi's diagnostics reported a drop; the blocks lost after this extension's rewrite apart", () => {
    const base = { fingerprints: [], busts: [], tally: emptyRewriteTally(), sessionRewrites: 0 };
    expect(formatCacheView(base)).not.toContain("Reasoning:");
    const reasoning = { requests: 3, blocksLost: 4, afterKeeperRewrite: 3, lastBlocks: 4, reasons: ["prefix_mismatch"] };
    expect(formatCacheView({ ...base, reasoning })).toContain(
      "Reasoning: the provider dropped 4 thinking blocks the model had written, reported on 3 requests — 3 after this extension changed earlier history (counted as a cost when it decided to), 1 for other reasons.",
    );
    expect(formatCacheView({ ...base, reasoning }, { detail: true })).toContain("Reasoning dropped, as the provider gave the reason: prefix_mismatch.");
  });
});

const bust = (cause: BustAttribution["cause"], cost: number): BustAttribution => ({ at: 60_000, cause, layer: cause === "none" ? "none" : "tail", rewrittenTokens: cost, estimatedCost: cost, detail: cause });

describe("/keeper cache agrees with the stats' rewrites", () => {
  const v = (cause: BustAttribution["cause"], estimatedCost = 0) => ({ cause, estimatedCost });

  test("the tally follows each flush rewrite to the request that carried it, and counts every bust", () => {
    let t = tallyFlushRewrite(emptyRewriteTally());
    t = tallyRequest(t, undefined); // first request
    t = tallyFlushRewrite(tallyFlushRewrite(t));
    t = tallyRequest(t, v("keeper-rewrite", 300)); // two flushes, one bust
    t = tallyRequest(tallyFlushRewrite(t), v("ttl-expiry", 900));
    t = tallyRequest(tallyFlushRewrite(t), v("none"));
    t = tallyRequest(t, v("model-switch", 50)); // nothing pending: only the totals move
    t = tallyFlushRewrite(t);
    expect(t).toEqual({ requests: 5, compared: 4, busts: 3, keeperBusts: 1, keeperBustCost: 300, recorded: 6, pending: 1, billed: 2, free: 1, uncached: 1, unobserved: 1 });
  });

  test("no keeper bust but one rewrite: the text says where the rewrite went instead of contradicting the stats", () => {
    const tally = tallyRequest(tallyRequest(emptyRewriteTally(), undefined), v("none"));
    const t2 = tallyRequest(tallyFlushRewrite(tally), v("ttl-expiry", 500));
    const text = formatCacheView({ fingerprints: [], busts: [bust("ttl-expiry", 500)], tally: t2, sessionRewrites: 1 });
    expect(text.split("\n")[0]).toBe(
      "Prompt cache: 1 of 3 requests had to write cached history again — 0 because this extension changed history, 1 for other reasons (the cache expired, or the model, thinking level, tools or system prompt changed).",
    );
    expect(text).toContain("This extension changed history already sent 1 time in this session (as /keeper stats counts): 1 landed on a request whose cache was lost anyway (free).");
  });

  test("totals survive the short bust ring; rewrites not yet sent or from before are named; a quiet cache says so", () => {
    let tally = emptyRewriteTally();
    tally = tallyRequest(tally, undefined);
    for (let i = 0; i < 40; i++) tally = tallyRequest(tally, v("none"));
    tally = tallyFlushRewrite(tally);
    const text = formatCacheView({ fingerprints: [], busts: [], tally, sessionRewrites: 3 });
    expect(text.split("\n")[0]).toBe("Prompt cache: each of the 41 requests so far extended the one before (no cached history had to be written again).");
    expect(text).toContain("1 not sent yet (takes effect at the next request); 2 before Pi loaded this session");
    expect(formatCacheView({ fingerprints: [], busts: [], tally, sessionRewrites: 3 }, { detail: true })).toContain("No cache rewrites since this extension started in this session.");
    expect(cacheSummary({ fingerprints: [], busts: [], tally: emptyRewriteTally(), sessionRewrites: 0 })).toContain("no request sent yet");
  });
});

describe("/keeper stats and /keeper now", () => {
  test("units on every figure; the thinking boundary only when the strip applies", () => {
    const state = emptyState();
    state.stats.summarizerCost = 0.0042;
    state.stats.tokensSavedEstimate = 12_345;
    const off = formatStats(state, undefined).join("\n");
    expect(off).toContain("removed by all flushes together: ≈ 12,345 tokens");
    expect(off).not.toContain("kept out of the next request");
    expect(formatStats(state, undefined, { prunedTokens: 4_321 }).join("\n")).toContain('kept out of the next request: ≈ 4,321 tokens (the status line\'s "−4.3k pruned")');
    expect(off).toContain("$0.0042");
    expect(off).toContain("not in Pi's $ footer");
    expect(off).not.toContain("thinking");
    expect(formatStats(state, undefined, { thinkingStrip: true }).join("\n")).toContain("thinking removed from answers before: nothing yet");
  });
  test("an empty session has nothing to flush; a flush that changed nothing says so", () => {
    expect(nothingToFlush([])).toBe(true);
    expect(nothingToFlush([{ role: "user" }])).toBe(true);
    expect(nothingToFlush([{ role: "user" }, { role: "assistant" }])).toBe(false);
    expect(flushOutcomeLine({ trigger: "manual", batches: 0, decisions: [], persistedEntries: 3, durationMs: 2 })).toBe("context-keeper: flushed — nothing new to prune since the last flush");
    expect(
      flushOutcomeLine({ trigger: "manual", batches: 1, decisions: [{ kind: "stub", key: "a" }, { kind: "deferred", what: "stub", key: "b" }], persistedEntries: 3, durationMs: 2 }),
    ).toBe("context-keeper: flushed — 1 tool output(s) replaced by summaries, 1 change(s) put off until they pay for re-writing the cache (/keeper why)");
  });
});

describe("compaction codes become sentences", () => {
  test("every code the user can meet, and an unknown one without underscores", async () => {
    const { compactionNotStarted } = await import("./compaction-text.ts");
    expect(compactionNotStarted("nothing_to_compact")).toBe("not started: there is nothing old enough to compact yet: the history fits in what Pi keeps anyway");
    for (const code of ["disabled", "no_model", "busy", "not_in_window", "no_usage"]) expect(compactionNotStarted(code)).not.toContain(code);
    expect(compactionNotStarted("new_code")).toBe("not started: new code");
  });
});

describe("the thinking-strip section says it in words", () => {
  test("no behaviour codes, the plain reason, the model's row", async () => {
    const { resolveThinkingPolicy } = await import("../thinking/index.ts");
    const { formatThinkingPolicy } = await import("./pruning-view.ts");
    const decision = resolveThinkingPolicy({ mode: "auto", provider: "anthropic", modelId: "claude-sonnet-4-5", api: "anthropic-messages" });
    const lines = formatThinkingPolicy("anthropic/claude-sonnet-4-5", decision);
    expect(lines[0]).toContain("anthropic/claude-sonnet-4-5 (");
    expect(lines[0]).toContain("drops the thinking of earlier requests by itself");
    expect(lines[1]).toBe("strip: no — auto: the provider already drops the thinking of earlier requests: stripping saves nothing and rewrites the cache");
    expect(lines.join("\n")).not.toContain("drops-closed-cycle");
    const off = formatThinkingPolicy("x/y", resolveThinkingPolicy({ mode: "off", provider: "x", modelId: "y", api: "openai-responses" }));
    expect(off[1]).toBe("strip: no — thinkingStrip.mode is off");
  });
});
