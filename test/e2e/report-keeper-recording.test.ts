/**
 * The report on sessions recorded WITH the keeper (what every user of the extension has), held
 * to what the fake server billed: each scenario runs through the real pi CLI twice, without
 * the extension and with it (default settings), and the report reads both session files.
 *
 * Every figure is computed two ways:
 * - "you paid": the report's dollars from the session file's usage = the fake server's bill
 *   for the same requests, priced from its wire usage (`wireDollars`) — for bare Pi with its
 *   compaction's summary requests, whose usage Pi records on the compaction entry; for the
 *   keeper with its summarizer's calls and every background compaction summary request it made
 *   (an applied one's usage is on Pi's compaction entry, one never applied on its spend entry);
 * - on the fourth script (the second with the keeper's background summaries started early, one
 *   made and never applied) `/keeper stats`, asked in a second pi process on the session, gives
 *   the dollars the server billed for those requests;
 * - the keeper arm's replay of a keeper recording — rebuilt from the keeper's entries — calibrated
 *   against that recording (its estimator fitted to the recorded usage, within 10%), also when the
 *   keeper ran with model summaries, which land while later requests are in flight;
 * - the counterfactual: "without the keeper ≈ $X" on the keeper recording against the bill of
 *   the run made without it, compaction requests included (within 10% on every script), and
 *   "with the keeper ≈ $Y" on the bare recording against the keeper run's bill when the keeper
 *   ran with the defaults (within 20%: a simulation at the other run's request times).
 * On the second scenario bare Pi compacts; the keeper, whose background summaries wait until the
 * context needs them, does not (its chains keep the context below Pi's threshold). The report
 * simulates Pi's own threshold compaction in the arm the recording does not show
 * (src/report/pi-compaction.ts): bare Pi on the keeper recording compacts where its own context
 * passes Pi's threshold and pays the summary request. Run over the bare recording itself (its
 * recorded compaction set aside, its recorded usage as the arm's), the same rule compacts where
 * Pi did, with Pi's cut and Pi's figure for the context.
 */
import { describe, expect, test } from "bun:test";
import { ARMS } from "../../src/report/arms.ts";
import { reportSession, type SessionReport } from "../../src/report/session-report.ts";
import type { SessionEntry } from "../../src/compaction/primitives.ts";
import { initialPiCompactionSim, PI_COMPACTION_DEFAULTS, stepPiCompaction, type SimulatedCompaction } from "../../src/report/pi-compaction.ts";
import { piReplayPrimitives } from "../../src/report/pi-session-contexts.ts";
import { readRecording } from "../../src/report/replay.ts";
import { keeperRecordingOf } from "../../src/report/recorded-with.ts";
import { moneyLine } from "../../src/report/table.ts";
import { formatDollars } from "../../src/ui/status-line.ts";
import { lastUserText, PI_SUMMARIZATION_PROMPT_START, systemText } from "../support/fake-anthropic/classify.ts";
import { defaultSideRouter } from "../support/fake-anthropic/server.ts";
import type { RecordedRequest, SideRouter } from "../support/fake-anthropic/types.ts";
import { recordRun, wireDollars, type RecordedRun } from "../support/report/keeper-recording.ts";
import { generateScenario, type Scenario } from "../support/scenario.ts";

const ARMS_RUN = ARMS.filter((a) => a.name === "bare" || a.name === "keeper");
const report = (name: string, run: RecordedRun): SessionReport => reportSession({ file: name, text: run.text, arms: ARMS_RUN, summaries: "size-model" }).report;
const gap = (a: number, b: number) => Math.abs(a / b - 1);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The simulation of Pi's threshold compaction over a recording of bare Pi, its own compactions set aside, with its recorded usage. */
function simulatedOver(text: string): SimulatedCompaction[] {
  const recording = readRecording("bare.jsonl", text);
  const parentOf = new Map(recording.points.entries.map((e) => [e.id, e.parentId]));
  let sim = initialPiCompactionSim(recording.points.entries as SessionEntry[], () => false);
  recording.points.points.forEach((p, requestIndex) => {
    const leafId = parentOf.get(p.entryId) ?? null;
    sim = stepPiCompaction(sim, { requestIndex, leafId, recorded: p.context, at: p.assistant.timestamp, contextWindow: 200_000, settings: PI_COMPACTION_DEFAULTS, armUsage: () => undefined }, piReplayPrimitives).sim;
  });
  return [...sim.compactions];
}

/**
 * The keeper's summarizer on the fake server: a summary a twentieth of the batch it was sent
 * (at least 200 characters), so model summaries differ from anything the replay could make.
 */
const modelSummaries: SideRouter = (ctx) => {
  if (systemText(ctx.request.body).includes(PI_SUMMARIZATION_PROMPT_START)) return defaultSideRouter(ctx);
  const input = lastUserText(ctx.request.body);
  return { text: `- summary: ${input.replace(/\s+/g, " ").slice(0, Math.max(200, Math.round(input.length / 20)))}` };
};

describe("the report on keeper recordings, against the fake server's bill", () => {
  const runs: Array<{ scenario: Scenario; contextKeeper?: Record<string, unknown>; sideRouter?: SideRouter; env?: Record<string, string>; label: string }> = [
    { label: "defaults", scenario: generateScenario({ seed: 31, prompts: 4, stepsPerPrompt: [6, 10], files: 8, fileBytes: [2048, 24576] }) },
    // Bare Pi compacts; the keeper stays under Pi's threshold: the report simulates bare Pi's compaction.
    { label: "defaults, bare Pi compacts", scenario: generateScenario({ seed: 47, prompts: 5, stepsPerPrompt: [8, 14], files: 10, fileBytes: [4096, 40960] }) },
    // Model summaries land while the next request is in flight: the replay must follow the recording, not simulate.
    { label: 'summarizer.mode "model"', scenario: generateScenario({ seed: 53, prompts: 4, stepsPerPrompt: [6, 10], files: 8, fileBytes: [2048, 24576] }), contextKeeper: { summarizer: { mode: "model" } }, sideRouter: modelSummaries },
    // The second script with the keeper's background summaries started early (12% of the window; its context peaks at 49k of 200k): one is
    // made, waits for a need that never comes, and is never applied (cancelled at shutdown).
    {
      label: "background summaries never applied",
      scenario: generateScenario({ seed: 47, prompts: 5, stepsPerPrompt: [8, 14], files: 10, fileBytes: [4096, 40960] }),
      env: { PI_ASYNC_PREFIX_COMPACTION_START_RATIO: "0.12" },
    },
  ];
  for (const { scenario, contextKeeper, sideRouter, env, label } of runs) {
    test(`seed ${scenario.seed} (${label}): you paid = the wire bill; calibrated within 10%; the counterfactual within 10% of the other run's bill`, async () => {
      const bare = await recordRun("bare", { scenario });
      const keeper = await recordRun("keeper", { scenario, ...(contextKeeper ? { contextKeeper } : {}), ...(sideRouter ? { sideRouter } : {}), ...(env ? { env, resumeWith: ["/keeper stats"] } : {}) });
      expect([bare.failed, keeper.failed]).toEqual([0, 0]);
      expect(keeper.main.length).toBe(bare.main.length);
      const onKeeper = report("keeper.jsonl", keeper);
      const onBare = report("bare.jsonl", bare);
      // The session's own requests, the keeper's summarizer calls, bare Pi's compaction requests.
      const isCompaction = (r: RecordedRequest) => systemText(r.body).includes(PI_SUMMARIZATION_PROMPT_START);
      const summarizerCalls = keeper.side.filter((r) => !isCompaction(r));
      expect(summarizerCalls.length > 0).toBe(sideRouter !== undefined);
      // The keeper's bill: its requests, its summarizer's calls and its background compaction summaries, applied (on Pi's compaction entry) or not (its spend entries).
      const backgroundSummaries = wireDollars(keeper.side.filter(isCompaction));
      const billKeeper = wireDollars(keeper.main) + wireDollars(summarizerCalls) + backgroundSummaries;
      // Bare Pi's bill: its requests and its compaction's summary requests (recorded on the compaction entry).
      const billBare = wireDollars(bare.main) + wireDollars(bare.side.filter(isCompaction));
      const unapplied = keeperRecordingOf(keeper.text.trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)).unappliedCompaction;

      expect(onKeeper.recorded_with).toBe("keeper");
      expect(onBare.recorded_with).toBe("bare");
      expect(onKeeper.calibration.arm).toBe("keeper");
      expect(onKeeper.calibration.estimator.source).toBe("per-session");
      // What was paid, two ways: the session file's usage and the server's wire usage.
      expect(onKeeper.money.paid_usd).toBeCloseTo(billKeeper, 9);
      expect(onBare.money.paid_usd).toBeCloseTo(billBare, 9);
      // The keeper saved money on this script (it prunes from the first request end on).
      expect(billKeeper).toBeLessThan(billBare);

      expect(onKeeper.calibration.total_error).toBeLessThan(0.1);
      expect(gap(onKeeper.money.replayed_paid_usd, billKeeper)).toBeLessThan(0.1);
      expect(onKeeper.money.bare_usd).toBe(onKeeper.arms.bare.usd_total);
      // Without the keeper: within 10% of bare Pi's bill, whether bare Pi compacted or not.
      expect(gap(onKeeper.money.bare_usd, billBare)).toBeLessThan(0.1);
      const recordedCompactions = (run: RecordedRun) => run.text.split("\n").filter((l) => l.includes('"type":"compaction"')).map((l) => JSON.parse(l) as { firstKeptEntryId: string; tokensBefore: number });
      const bareCompactions = recordedCompactions(bare);
      // Where bare Pi compacted and the keeper did not, the bare arm compacted on its own and paid for it.
      if (recordedCompactions(keeper).length === 0) expect(onKeeper.arms.bare!.compactions).toBe(bareCompactions.length);
      expect(onKeeper.arms.bare!.usd_compaction > 0).toBe(onKeeper.arms.bare!.compactions > 0);
      // The rule over the bare recording: Pi's compactions, at Pi's cut, with Pi's figure.
      const simulated = simulatedOver(bare.text);
      expect(simulated.map((c) => ({ firstKeptEntryId: (c.entry as { firstKeptEntryId: string }).firstKeptEntryId, tokensBefore: c.tokensBefore }))).toEqual(
        bareCompactions.map((c) => ({ firstKeptEntryId: c.firstKeptEntryId, tokensBefore: c.tokensBefore })),
      );
      expect(onKeeper.money.saved_usd).toBeCloseTo(onKeeper.money.bare_usd - onKeeper.money.paid_usd, 12);
      expect(onBare.calibration.total_error).toBeLessThan(0.1);
      // The other direction is looser: a simulation of the keeper with the default settings, at the
      // bare run's request times (the gate prices with them; Pi's threshold compaction simulated in
      // it, bare Pi's own not inherited): 1.3% and 2.3% here. Not comparable when the keeper ran with
      // other settings (model summaries).
      if (!contextKeeper) expect(gap(onBare.money.keeper_usd!, billKeeper)).toBeLessThan(0.2);

      if (env) {
        // Made and never applied: the keeper compacted nothing, and every background summary request is in its spend entries, at the server's price.
        expect(recordedCompactions(keeper)).toHaveLength(0);
        expect(backgroundSummaries).toBeGreaterThan(0);
        expect(unapplied.estimated).toBe(false);
        expect(unapplied.cost).toBeCloseTo(backgroundSummaries, 9);
        expect(unapplied.calls).toBe(keeper.side.filter(isCompaction).length);
        // /keeper stats on the session (a second pi process, no request): the same dollars.
        expect(keeper.resumed!.requests).toBe(0);
        const stats = keeper.resumed!.notifications.map((n) => n.message).find((m) => m.includes("never applied"));
        expect(stats).toContain(`never applied: ${unapplied.jobs} (${unapplied.calls} call${unapplied.calls === 1 ? "" : "s"})`);
        expect(stats).toContain(formatDollars(backgroundSummaries));
      }

      const line = moneyLine(onKeeper);
      expect(line).toMatch(/^you paid \$\d+\.\d\d \(recorded with the keeper\); without the keeper ≈ \$\d+\.\d\d \(≈ \$\d+\.\d\d saved, \d+%\)$/);
      console.log(
        `[report-keeper] seed ${scenario.seed} (${label}), ${keeper.main.length} requests: keeper run billed $${billKeeper.toFixed(4)}, bare run $${billBare.toFixed(4)}; ` +
          `on the keeper recording: paid $${onKeeper.money.paid_usd.toFixed(4)}, replayed $${onKeeper.money.replayed_paid_usd.toFixed(4)} (calibration ${pct(onKeeper.calibration.total_error)}, ` +
          `${pct(onKeeper.calibration.total_error_cross_validated ?? Number.NaN)} cross-validated), without the keeper ≈ $${onKeeper.money.bare_usd.toFixed(4)} (${pct(gap(onKeeper.money.bare_usd, billBare))} from the bare bill); ` +
          `on the bare recording: calibration ${pct(onBare.calibration.total_error)}, with the keeper ≈ $${onBare.money.keeper_usd!.toFixed(4)} (${pct(gap(onBare.money.keeper_usd!, billKeeper))} from the keeper bill); ` +
          `compactions: bare run ${bareCompactions.length} ($${wireDollars(bare.side.filter(isCompaction)).toFixed(4)}), bare arm on the keeper recording ${onKeeper.arms.bare!.compactions} ($${onKeeper.arms.bare!.usd_compaction.toFixed(4)}); ` +
          `keeper's background compaction requests $${backgroundSummaries.toFixed(4)} (never applied: ${unapplied.jobs} summaries, ${unapplied.calls} calls, $${unapplied.cost.toFixed(4)})`,
      );
    }, 300_000);
  }
});
