/**
 * Parity, proved on the wire: the live extension and the replay report drive the same engine.
 *
 * 1. live: a scripted session through the real pi CLI with the keeper, against the fake server;
 * 2. bare: the same script without the extension, recorded to a session file;
 * 3. replay: the bare recording through the report's keeper arm (`createKeeperReplayEngine`).
 *
 * Where timing does not enter (cache discipline off: no gate priced with request times, no
 * TTL; summaries extractive: no horizon), the replay's history for each request is
 * byte-identical to what the live run sent (cache marks aside: Pi places them, the replay's
 * serializer mimics it; recall refs carry each run's own timestamps, compared by rank). The keeper arm's cost estimate — the report's analyzer and prices
 * over the replayed bodies at the recorded times — is within 2% of the same model applied to
 * the live run's bodies at their arrival times. A second live run with cache discipline on
 * (request times enter) is held to the cost bound only. The budget trigger is on in every arm
 * (its defaults): the replay steps `turn-end` where Pi fired it, with Pi's context usage
 * worked out over the recording.
 *
 * With Pi's own compaction between two prompts (`/compact` in both runs), the replay reads the
 * compaction from the recording and steps it where live Pi fired `session_compact` — the
 * turns before it over the branch as it was, then `compacted`, then the rest — and every
 * request's history is again byte-identical.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { analyzeRun, type RequestAnalysis } from "../../src/cache/analyzer.ts";
import { billedEquivalent } from "../../src/cache/pricing.ts";
import { createCharRatioEstimator, DEFAULT_ESTIMATOR_OPTIONS } from "../../src/cache/token-estimator.ts";
import type { TimedRequest, WireRequestBody } from "../../src/cache/wire-types.ts";
import type { ContextMessage } from "../../src/session/messages.ts";
import { applySettingsOverride, keeperReplayConfig, type SettingsOverride } from "../../src/report/keeper-config.ts";
import { createKeeperReplayEngine } from "../../src/report/keeper-engine.ts";
import { replaySession, type ReplayResult } from "../../src/report/replay.ts";
import { replaySummarizer } from "../../src/report/replay-summaries.ts";
import { DEFAULT_SETTINGS } from "../../src/settings/parse.ts";
import { join } from "node:path";
import { createPiWorkspace, REPO_ROOT, runPi, type PiRunResult, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { generateLongLoopScenario } from "../support/long-loop-scenario.ts";
import type { MainStep } from "../support/fake-anthropic/types.ts";
import type { SandboxFiles } from "../support/scenario-sandbox.ts";
import { withoutCacheControl } from "./support/wire-checks.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const MODEL = { id: "claude-sonnet-4-5", contextWindow: 1_000_000 };
/**
 * The budget trigger on in both arms (its defaults): the live host steps `turn-end` with Pi's
 * context usage, the replay with Pi's estimate worked out over the recording, and the engine
 * decides with its own baseline.
 */
const BUDGET = { budgetTrigger: { enabled: true } };
const TIMELESS: SettingsOverride = { pruning: BUDGET, summarizer: { mode: "extractive" }, cache: { discipline: false } };
const DISCIPLINED: SettingsOverride = { pruning: BUDGET, summarizer: { mode: "extractive" } };


const billed = (analyses: readonly RequestAnalysis[]): number =>
  analyses.reduce((n, a) => n + billedEquivalent({ uncached: a.uncached, write5m: a.write5m, write1h: a.write1h, read: a.read, output: 0 }), 0);

/**
 * The live run's cost under the report's cost model (`replaySession`'s analyzer options: the
 * char-ratio estimator, closed-cycle thinking dropped, the cache losses the recording shows)
 * over the messages pi sent, its cache marks included, at their arrival times. The frame
 * around them — system prompt and tool definitions — is the replay's: the recording does not
 * hold pi's, the report estimates them, and they are not the keeper's doing.
 */
const liveCost = (run: PiRunResult, replay: ReplayResult, frame: "replay" | "pi" = "replay"): number =>
  billed(
    analyzeRun(
      run.mainRequests.map((r, i): TimedRequest => {
        const sent = r.body as unknown as WireRequestBody;
        const body = frame === "replay" && replay.requests[i] ? { ...replay.requests[i]!.body, messages: sent.messages } : sent;
        return { body, timestamp: r.arrivedAtMs };
      }),
      {
        estimator: createCharRatioEstimator(DEFAULT_ESTIMATOR_OPTIONS),
        closedCycleThinking: "dropped",
        invalidateBefore: new Set([...replay.externalInvalidations, ...replay.thinkingChanges]),
      },
    ),
  );

function replayKeeper(bare: PiRunResult, override: SettingsOverride): ReplayResult & { budgetFlushes: number; loopFlushes: number } {
  const settings = applySettingsOverride(DEFAULT_SETTINGS, override);
  const engine = createKeeperReplayEngine({
    config: keeperReplayConfig(settings),
    summarize: replaySummarizer("extractive"),
    ...(settings.cache.discipline ? { discipline: settings.cache } : {}),
  });
  const text = `${bare.sessionEntries.map((e) => JSON.stringify(e)).join("\n")}\n`;
  const replay = replaySession({
    file: bare.sessionFile ?? "bare.jsonl",
    text,
    transformContext: (messages, i, info) => engine.transformContext(messages as ContextMessage[], i, info) as never,
    transformBody: (body, i, info) => engine.transformBody(body, i, info),
  });
  const flushes = engine.state().flushes;
  return { ...replay, budgetFlushes: flushes.filter((f) => f.reason === "budget").length, loopFlushes: flushes.filter((f) => f.reason === "loop").length };
}

/**
 * Recall refs name an occurrence by its assistant message's timestamp (`ref=<id>@<ms>#<n>`):
 * a run-time value, different in every run. Each run's ref timestamps are replaced by their
 * rank among that run's ref timestamps, so two runs compare byte for byte everywhere else.
 */
function rankRefTimestamps(texts: string[]): string[] {
  const REF = /@(\d{10,})#/g;
  const stamps = [...new Set(texts.flatMap((t) => [...t.matchAll(REF)].map((m) => Number(m[1]))))].sort((a, b) => a - b);
  const rank = new Map(stamps.map((t, i) => [t, i]));
  return texts.map((t) => t.replace(REF, (_all, ts: string) => `@t${rank.get(Number(ts))}#`));
}

/**
 * Per request, the live run's messages and the replay's, each run's ref timestamps by rank; the
 * requests that differ. `conversation`: system messages left out on both sides (Pi's tool
 * patches go on the wire as `tool_addition` blocks, which the report's serializer leaves out).
 */
function historiesOf(live: PiRunResult, replay: ReplayResult, o: { conversation?: boolean } = {}): { sent: string[]; replayed: string[]; differing: number[] } {
  const shown = <M extends { role: string }>(ms: M[]) => (o.conversation ? ms.filter((m) => m.role !== "system") : ms);
  const sent = rankRefTimestamps(live.mainRequests.map((r) => JSON.stringify(withoutCacheControl(shown(r.body.messages)))));
  const replayed = rankRefTimestamps(replay.requests.map((r) => JSON.stringify(withoutCacheControl(shown(r.body.messages)))));
  return { sent, replayed, differing: sent.flatMap((text, i) => (text === replayed[i] ? [] : [i])) };
}

/** Where two message lists first differ, with a short excerpt of each side (diagnostics). */
function firstDifference(a: string, b: string): string {
  const at = [...a].findIndex((ch, k) => ch !== b[k]);
  return `char ${at}: live …${a.slice(Math.max(0, at - 80), at + 160)}… replay …${b.slice(Math.max(0, at - 80), at + 160)}…`;
}

/**
 * One script run bare and live with `override`, the bare recording replayed with it: no request
 * refused, as many requests, and every request's history the same (the first difference printed).
 */
async function liveAgainstReplay(
  label: string,
  script: { prompts: string[]; steps: MainStep[]; files: SandboxFiles },
  override: SettingsOverride,
  serverOptions: { tokenizer?: "text" } = {},
): Promise<{ replay: ReturnType<typeof replayKeeper>; live: PiRunResult; bare: PiRunResult; workspace: PiWorkspace }> {
  const workspace = createPiWorkspace(script.files);
  workspaces.push(workspace);
  const common = { prompts: script.prompts, script: script.steps, mode: "rpc" as const, workspace, model: MODEL, serverOptions: { idNonce: "same", ...serverOptions } };
  const bare = await runPi({ ...common, extension: false });
  const live = await runPi({ ...common, contextKeeper: override as Record<string, unknown> });
  expect(live.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
  const replay = replayKeeper(bare, override);
  expect(replay.requests.length).toBe(live.mainRequests.length);
  const { sent, replayed, differing } = historiesOf(live, replay);
  if (differing.length > 0) console.log(`[parity] ${label}: first difference at request ${differing[0]}: ${firstDifference(sent[differing[0]!]!, replayed[differing[0]!]!)}`);
  expect(differing).toEqual([]);
  return { replay, live, bare, workspace };
}

describe("parity: the live keeper and the replay of the bare recording", () => {
  const scenario = generateScenario({ seed: 23, prompts: 4, stepsPerPrompt: [6, 9], files: 8, fileBytes: [2048, 24576] });

  test("same history per request (timing kept out), cost within 2%", async () => {
    const { replay, live, bare, workspace } = await liveAgainstReplay("timeless", scenario, TIMELESS);
    // The keeper changed history (stubs), and the replay changed it identically.
    const bareChars = JSON.stringify(bare.mainRequests.at(-1)!.body.messages).length;
    const liveChars = JSON.stringify(live.mainRequests.at(-1)!.body.messages).length;
    expect(liveChars).toBeLessThan(bareChars * 0.8);

    const costLive = liveCost(live, replay);
    const costReplay = billed(replay.analysis);
    const gap = Math.abs(costReplay - costLive) / costLive;
    const ownFrame = liveCost(live, replay, "pi");
    console.log(
      `[parity] ${replay.requests.length} requests, 0 differ, ${replay.budgetFlushes} budget flushes; keeper cost live ${costLive.toFixed(0)} vs replay ${costReplay.toFixed(0)} (${(gap * 100).toFixed(2)}%); with pi's own system prompt and tools the live run costs ${ownFrame.toFixed(0)}`,
    );
    expect(gap).toBeLessThanOrEqual(0.02);

    // Cache discipline on: request times enter the gate, so only the cost is held to the bound.
    const common = { prompts: scenario.prompts, script: scenario.steps, mode: "rpc" as const, workspace, model: MODEL, serverOptions: { idNonce: "same" } };
    const disciplined = await runPi({ ...common, contextKeeper: DISCIPLINED as Record<string, unknown> });
    expect(disciplined.requests.filter((r) => r.status !== 200)).toHaveLength(0);
    const replayD = replayKeeper(bare, DISCIPLINED);
    const same = replayD.requests.length - historiesOf(disciplined, replayD).differing.length;
    const liveD = liveCost(disciplined, replayD);
    const replayCostD = billed(replayD.analysis);
    const gapD = Math.abs(replayCostD - liveD) / liveD;
    console.log(`[parity] discipline on: ${same} of ${replayD.requests.length} requests identical; cost live ${liveD.toFixed(0)} vs replay ${replayCostD.toFixed(0)} (${(gapD * 100).toFixed(2)}%)`);
    expect(gapD).toBeLessThanOrEqual(0.02);
  }, 400_000);

  // The turns before the compaction are stepped over the branch as it was then, the compaction (`compacted`), then the rest.
  test("with Pi's compaction between two prompts: the replay steps it where live did, same history per request", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    // /compact after the second prompt, in both runs: Pi's own compaction (the fake server's scripted summary).
    const prompts = [scenario.prompts[0]!, scenario.prompts[1]!, { command: { type: "compact" } }, scenario.prompts[2]!, scenario.prompts[3]!];
    const common = { prompts, script: scenario.steps, mode: "rpc" as const, workspace, model: MODEL, serverOptions: { idNonce: "same" } };
    const bare = await runPi({ ...common, extension: false });
    const live = await runPi({ ...common, contextKeeper: TIMELESS as Record<string, unknown> });
    expect(live.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    const compactions = (run: PiRunResult) => run.sessionEntries.filter((e) => (e as { type?: string }).type === "compaction").length;
    expect(compactions(bare)).toBe(1);
    expect(compactions(live)).toBe(1);

    const replay = replayKeeper(bare, TIMELESS);
    expect(replay.requests.length).toBe(live.mainRequests.length);
    const { sent, replayed, differing } = historiesOf(live, replay);
    if (differing.length > 0) console.log(`[parity] compaction: first difference at request ${differing[0]}: ${firstDifference(sent[differing[0]!]!, replayed[differing[0]!]!)}`);
    // Pruned after the compaction too (the requests after it carry less than bare Pi's), and identically.
    const firstAfter = live.mainRequests.findIndex((r) => JSON.stringify(r.body.messages).includes("Scripted compaction summary"));
    expect(firstAfter).toBeGreaterThan(0);
    const chars = (run: PiRunResult) => JSON.stringify(run.mainRequests.at(-1)!.body.messages).length;
    expect(chars(live)).toBeLessThan(chars(bare));
    expect(differing).toEqual([]);
    console.log(`[parity] compaction: ${replay.requests.length} requests, 0 differ`);
  }, 400_000);

  // A tool Pi declares mid-loop (test/support/late-tool/) on a model that takes it in place: the
  // live keeper renders the transcript with Pi's system messages where they are
  // (`context_with_system`), as the replay reads them from the recording; the chain the patch
  // sits in collapses in both, the patch kept after its summary.
  test("a tool added inside a tool loop, kept in place: the same history per request", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const common = {
      prompts: scenario.prompts,
      script: scenario.steps,
      mode: "rpc" as const,
      workspace,
      model: { id: "claude-opus-4-8", contextWindow: 1_000_000 },
      compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true },
      args: ["-e", join(REPO_ROOT, "test/support/late-tool/index.ts")],
      env: { PI_LATE_TOOL_AT: "2", PI_LATE_TOOL_WHEN: "loop" },
      serverOptions: { idNonce: "same" },
    };
    const bare = await runPi({ ...common, extension: false });
    const live = await runPi({ ...common, contextKeeper: TIMELESS as Record<string, unknown> });
    expect(live.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
    const patched = (r: PiRunResult["mainRequests"][number]) => r.body.messages.some((m) => m.role === "system");
    const from = live.mainRequests.findIndex(patched);
    expect(from).toBeGreaterThan(0);
    expect(live.mainRequests.slice(from).every(patched)).toBe(true);
    const replay = replayKeeper(bare, TIMELESS);
    expect(replay.requests.length).toBe(live.mainRequests.length);
    const { sent, replayed, differing } = historiesOf(live, replay, { conversation: true });
    if (differing.length > 0) console.log(`[parity] late tool: first difference at request ${differing[0]}: ${firstDifference(sent[differing[0]!]!, replayed[differing[0]!]!)}`);
    expect(differing).toEqual([]);
    // The chain the patch sits in was collapsed (the last request shows every earlier chain's summary).
    const summaries = (JSON.stringify(live.mainRequests.at(-1)!.body.messages).match(/compressed tool chain/g) ?? []).length;
    expect(summaries).toBe(scenario.prompts.length - 1);
    console.log(`[parity] late tool: ${replay.requests.length} requests, 0 differ (patch in place from request ${from}), ${summaries} chains collapsed`);
  }, 400_000);

  // A tight budget fires inside the loops. The provider counts a message block as Pi estimates a
  // message (characters / 4), so the context usage the live host reads from Pi is the one the
  // replay works out over the bare recording (its recorded usage less what the render left out).
  // The extension's own compaction is off in the live run: the replay does not simulate it, and
  // its start window holds the budget flush (`cooperation.ts`).
  test("a budget trigger that fires inside the loops: the same flushes, the same history per request", async () => {
    const tight: SettingsOverride = { ...TIMELESS, pruning: { budgetTrigger: { enabled: true, fraction: 0.5, maxTokens: 6000 } }, compaction: { enabled: false } };
    const { replay } = await liveAgainstReplay("budget", scenario, tight, { tokenizer: "text" });
    expect(replay.budgetFlushes).toBeGreaterThan(0);
    console.log(`[parity] budget: ${replay.requests.length} requests, 0 differ, ${replay.budgetFlushes} budget flushes`);
  }, 400_000);

  // Long loops with large reads first: the in-loop trigger fires where live Pi's turn_end fired
  // (the live host awaits the flush, so it lands on the next request, as the replay has it), and
  // every request carries the same history. Cache discipline off keeps timing out of the gate.
  test("flushes inside long tool loops when they pay: the same flushes, the same history per request", async () => {
    const long = generateLongLoopScenario({ seed: 31, prompts: 2, stepsPerPrompt: [24, 30], earlySteps: [4, 6] });
    const { replay } = await liveAgainstReplay("loops", long, TIMELESS);
    expect(replay.loopFlushes).toBeGreaterThan(1);
    console.log(`[parity] loops: ${replay.requests.length} requests, 0 differ, ${replay.loopFlushes} flushes inside loops`);
  }, 400_000);
});
