/**
 * Pi's own idle cache warming (`cacheWarming: "idle"`, Pi's default) against the keeper's
 * flushes, on the wire (issue 23 item 5). Pi's refresh replays the last request with a one-token
 * output cap; after a request-end flush applied a rewrite, the next request no longer carries
 * that prefix, so a refresh is spent on tokens nobody reads again. The keeper's vote
 * (`cache_warming_decision`): warm only if what the rewrite keeps of the cached prefix still pays
 * (`warmingOverride`, over the rewrite applied and not sent yet and the one the gate holds back).
 *
 * Setup: a 12 s prompt-cache lifetime (Pi refreshes 2 s after the last request), cache writes
 * priced high enough that Pi's idle economics say "warm", Opus 4.8 with adaptive thinking (a
 * refresh must be replayable; its thinking policy strips old thinking, so every request-end flush
 * rewrites). A probe extension (test/support/warming-probe/) reports each decision; the waits are
 * on those reports and on Pi's own `entry_appended` of a refresh, never on time.
 *
 * - bare Pi refreshes the idle prefix;
 * - the keeper, whose last flush rewrote history, stops the refresh (and says so in `/keeper cache`),
 *   and the next request indeed rewrites that prefix;
 * - the keeper with nothing to rewrite (pruning and the strip off) lets Pi refresh.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { classifyRequest, type RecordedRequest, type RequestClassifier } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, REPO_ROOT, runPi, type PiRunResult, type PiWorkspace, type RpcRecord, type RpcStep } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { expectCleanRun, withoutCacheControl } from "./support/wire-checks.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const PROBE = join(REPO_ROOT, "test/support/warming-probe/index.ts");
/** A refresh replays the last request with a one-token output cap: side, not a script step. */
const isRefresh = (r: RecordedRequest) => r.body.max_tokens === 1;
const classify: RequestClassifier = (body) => (body.max_tokens === 1 ? "side" : classifyRequest(body));
const MODEL = { id: "claude-opus-4-8", contextWindow: 1_000_000, promptCache: { short: 12 }, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 300 } };

const isDecision = (r: RpcRecord) => r.type === "extension_ui_request" && String(r.message ?? "").startsWith("[warming-probe]");
const lastSettled = (all: readonly RpcRecord[]) => all.map((r) => r.type).lastIndexOf("agent_settled");
/** Pi's idle decision (continuation probability 0.15) after the last run settled. */
const idleDecision: RpcStep = { waitFor: (r, all) => isDecision(r) && String(r.message).includes("p=0.15") && all.indexOf(r) > lastSettled(all), timeoutMs: 30_000 };
/** A refresh Pi completed after that decision (it appends its usage to the session). */
const refreshed: RpcStep = {
  waitFor: (r, all) => r.type === "entry_appended" && all.indexOf(r) > all.findIndex((x, i) => i > lastSettled(all) && isDecision(x)) && all.some((x, i) => i > lastSettled(all) && isDecision(x)),
  timeoutMs: 30_000,
};

const cacheView = (r: PiRunResult) => r.notifications.map((n) => n.message).find((m) => m.startsWith("Prompt cache:")) ?? "";

/** Messages the first request kept of the second's (cache marks aside): how far the later request extends the earlier one. */
function keptMessages(earlier: RecordedRequest, later: RecordedRequest): number {
  const a = withoutCacheControl(earlier.body.messages);
  const b = withoutCacheControl(later.body.messages);
  let k = 0;
  while (k < a.length && JSON.stringify(a[k]) === JSON.stringify(b[k])) k++;
  return k;
}

describe("Pi's idle cache warming and the keeper's flushes", () => {
  const scenario = generateScenario({ seed: 41, prompts: 3, stepsPerPrompt: [4, 6], files: 8, fileBytes: [8192, 24576] });
  const [p1, p2, p3] = scenario.prompts as [string, string, string];
  const firstSteps = scenario.stepsByPrompt.slice(0, 2).flat().length;

  const run = async (o: { extension: boolean; contextKeeper?: Record<string, unknown>; after: RpcStep[] }) => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const r = await runPi({
      prompts: [p1, p2, idleDecision, ...o.after, p3],
      mode: "rpc",
      workspace,
      script: scenario.steps,
      classify,
      serverOptions: { idNonce: "same" },
      model: MODEL,
      compat: { forceAdaptiveThinking: true },
      thinking: "medium",
      settings: { cacheWarming: "idle" },
      extension: o.extension,
      contextKeeper: o.contextKeeper ?? { pruning: { budgetTrigger: { enabled: false } }, summarizer: { mode: "extractive" } },
      args: ["-e", PROBE],
      timeoutMs: 120_000,
    });
    expectCleanRun(r, scenario.steps.length);
    const decided = r.records.findIndex((x, i) => isDecision(x) && String(x.message).includes("p=0.15") && i > 0);
    expect(decided).toBeGreaterThan(0); // Pi came to an idle decision after the second prompt
    // The refreshes sent between the second prompt's last request and the third prompt's first.
    const last = r.mainRequests[firstSteps - 1]!;
    const next = r.mainRequests[firstSteps]!;
    const idleRefreshes = r.requests.filter((q) => isRefresh(q) && q.seq > last.seq && q.seq < next.seq);
    return { r, idleRefreshes, last, next };
  };

  test("bare Pi refreshes the idle prefix", async () => {
    const { idleRefreshes, last, next } = await run({ extension: false, after: [refreshed] });
    expect(idleRefreshes.length).toBeGreaterThan(0);
    // The refresh replays the last request; bare Pi's next request extends it.
    expect(JSON.stringify(withoutCacheControl(idleRefreshes[0]!.body.messages))).toBe(JSON.stringify(withoutCacheControl(last.body.messages)));
    expect(keptMessages(last, next)).toBe(last.body.messages.length);
    console.log(`[cache-warming] bare: ${idleRefreshes.length} idle refresh(es) of the last request's ${last.body.messages.length} messages`);
  }, 200_000);

  test("the keeper's last flush rewrote the prefix: no refresh is spent on it, /keeper cache says so", async () => {
    const { r, idleRefreshes, last, next } = await run({ extension: true, after: ["/keeper cache"] });
    expect(idleRefreshes).toEqual([]);
    expect(cacheView(r)).toMatch(/Cache warming: Pi was about to refresh the cached prefix \d+ times?; this extension stopped \d+ of them — \d+ because a rewrite of history/);
    // The next request rewrote what the refresh would have kept warm.
    const kept = keptMessages(last, next);
    expect(kept).toBeLessThan(last.body.messages.length);
    console.log(`[cache-warming] keeper: 0 idle refreshes; the next request kept ${kept} of the last request's ${last.body.messages.length} messages\n  ${cacheView(r).split("\n").find((l) => l.startsWith("Cache warming"))}`);
  }, 200_000);

  test("the keeper with nothing to rewrite lets Pi refresh", async () => {
    const { r, idleRefreshes, last, next } = await run({
      extension: true,
      contextKeeper: { pruning: { enabled: false }, thinkingStrip: { mode: "off" }, summarizer: { mode: "extractive" } },
      after: [refreshed, "/keeper cache"],
    });
    expect(idleRefreshes.length).toBeGreaterThan(0);
    expect(keptMessages(last, next)).toBe(last.body.messages.length);
    expect(cacheView(r)).toContain("this extension let every refresh go");
  }, 200_000);
});
