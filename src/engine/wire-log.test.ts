/**
 * `/keeper cache`'s counts, computed two ways: the wire log's tally (what the first line and
 * `--detail` print) against the causes this test gave each request (a gap past the TTL, a
 * model switch, a history rewrite after a flush), on sessions longer than the short list of
 * rewrites it keeps. Once the list held every request and dropped old rewrites among the
 * many that extended the previous one, so the first line said "2 rewrites" and the list
 * "No cache rewrites seen".
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { WireMessage } from "../cache/wire-types.ts";
import { emptyRewriteTally } from "../discipline/rewrite-tally.ts";
import { a, payload, txt, u } from "../../test/support/discipline/builders.ts";
import { formatCacheView } from "../ui/cache-view.ts";
import { initialEngineState, step } from "./index.ts";
import { cacheViewOf, emptyWireLog, wireLogOnAnswer, wireLogOnRewrite, wireLogOnSend, type WireLog } from "./wire-log.ts";

const MIN = 60_000;
const RULE = { ttlMs: 5 * MIN, ttl: "5m" as const };

type Step = "extend" | "ttl" | "model" | "rewrite";

/** Sends one request per step; returns the log and the causes the test expects. */
function run(steps: readonly Step[]): { log: WireLog; busts: number; ours: number } {
  let log = emptyWireLog();
  let messages: WireMessage[] = [u(txt(200, "p0"))];
  let at = 0;
  let model = "anthropic/claude-sonnet-4-5";
  let previousKey: { at: number; model: string; thinkingLevel: string; toolsDigest: string } | undefined;
  let busts = 0;
  let ours = 0;
  steps.forEach((step, i) => {
    at += step === "ttl" ? 6 * MIN : 10_000;
    if (step === "model") model = model.includes("sonnet") ? "anthropic/claude-opus-4-5" : "anthropic/claude-sonnet-4-5";
    let rewrote = false;
    if (step === "rewrite" && messages.length > 2) {
      // A flush replaced an old output by a stub: history changes before the end.
      messages = [u(txt(20, `stub${i}`)), ...messages.slice(1)];
      log = wireLogOnRewrite(log);
      rewrote = true;
    }
    messages = [...messages, a(txt(30, `a${i}`)), u(txt(50, `u${i}`))];
    const key = { at, model, thinkingLevel: "high", toolsDigest: "t" };
    const sent = wireLogOnSend(log, { body: payload(messages), seam: -1, key, previousKey, rewroteSinceLast: rewrote, rule: RULE, digested: undefined });
    if (previousKey && step !== "extend" && !(step === "rewrite" && !rewrote)) {
      busts++;
      if (step === "rewrite") ours++;
    }
    log = sent.log;
    previousKey = key;
  });
  return { log, busts, ours };
}

const count = (text: string, re: RegExp): number => Number(text.match(re)?.[1]?.replace(/,/g, "") ?? Number.NaN);

describe("/keeper cache counts agree, however long the session", () => {
  test("two rewrites early in 59 requests: the first line, the reconciliation and the list all say 2", () => {
    const steps: Step[] = ["extend", "extend", "rewrite", "extend", "rewrite", ...Array.from({ length: 54 }, () => "extend" as const)];
    const { log, busts, ours } = run(steps);
    expect([busts, ours]).toEqual([2, 2]);
    const input = cacheViewOf(log, 2);
    const first = formatCacheView(input);
    expect(first.split("\n")[0]).toStartWith("Prompt cache: 2 of 59 requests had to write cached history again — 2 because this extension changed history");
    const detail = formatCacheView(input, { detail: true });
    expect(detail).toContain("Cache rewrites (the newest 2 of 2;");
    expect(detail).not.toContain("No cache rewrites");
  });

  test("property: first line, --detail's total, its list and this extension's cost are the same rewrites as the requests' causes", () => {
    const step = fc.constantFrom<Step>("extend", "extend", "extend", "ttl", "model", "rewrite");
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        const { log, busts, ours } = run(steps);
        const input = cacheViewOf(log, log.tally.recorded);
        const detail = formatCacheView(input, { detail: true });
        const first = detail.split("\n")[0]!;
        // Way 1: the causes this test gave the requests. Way 2: the screen.
        if (busts === 0) {
          expect(detail).toContain("No cache rewrites since this extension started in this session.");
          if (steps.length > 1) expect(first).toContain("extended the one before");
          return;
        }
        expect(count(first, /^Prompt cache: (\d+) of/)).toBe(busts);
        expect(count(first, /of (\d+) requests?/)).toBe(steps.length);
        expect(count(first, / — (\d+) because this extension/)).toBe(ours);
        expect(count(detail, /Cache rewrites \(the newest (\d+) of/)).toBe(Math.min(5, busts));
        expect(count(detail, /Cache rewrites \(the newest \d+ of (\d+);/)).toBe(busts);
        const listed = detail.split("\n").filter((l) => /^ {2}\d\d:\d\d:\d\d UTC/.test(l));
        expect(listed).toHaveLength(Math.min(5, busts));
        // The cost the first line names is the list's footer, and the sum of this extension's rewrites.
        if (ours > 0) {
          const cost = count(first, /the price of ≈ ([\d,]+) uncached input tokens/);
          expect(count(detail, /this extension's \d+ cost ≈ ([\d,]+)/)).toBe(cost);
          const ring = log.busts.filter((b) => b.cause === "keeper-rewrite").reduce((s, b) => s + b.estimatedCost, 0);
          if (busts <= log.busts.length) expect(cost).toBe(Math.round(ring));
        }
      }),
      { numRuns: 150 },
    );
  });

  test("an empty log says nothing was sent", () => {
    expect(formatCacheView({ fingerprints: [], busts: [], tally: emptyRewriteTally(), sessionRewrites: 0 })).toBe("Prompt cache: no request sent yet in this session, nothing to report.");
  });
});

const dropped = (n: number) => ({
  role: "assistant",
  content: [],
  diagnostics: [{ type: "anthropic_input_transformations", details: { transformations: Array.from({ length: n }, () => ({ type: "thinking_dropped", reason: "prefix_mismatch" })) } }],
});

describe("the wire log counts the reasoning the provider dropped", () => {
  test("at each answer (the engine's usage step), from Pi's diagnostics", () => {
    let state = initialEngineState();
    state = step(state, { type: "usage", message: dropped(2) as never }).state;
    state = step(state, { type: "usage", message: { role: "assistant", content: [] } as never }).state;
    expect(state.wire.reasoning).toMatchObject({ requests: 1, blocksLost: 2, afterKeeperRewrite: 0 });
  });

  test("counted against this extension when the last request's bust was its rewrite", () => {
    const log = { ...emptyWireLog(), busts: [{ at: 50, cause: "keeper-rewrite" as const, layer: "tail" as const, rewrittenTokens: 10, estimatedCost: 10, detail: "" }] };
    expect(wireLogOnAnswer(log, dropped(3), 50).reasoning.afterKeeperRewrite).toBe(3);
    expect(wireLogOnAnswer(log, dropped(3), 60).reasoning.afterKeeperRewrite).toBe(0);
    const quiet = wireLogOnAnswer(log, { role: "assistant" }, 50);
    expect(quiet).toBe(log);
  });
});
