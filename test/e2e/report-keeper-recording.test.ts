/**
 * The report on sessions recorded WITH the keeper (what every user of the extension has), held
 * to what the fake server billed: each scenario runs through the real pi CLI twice, without
 * the extension and with it (default settings), and the report reads both session files.
 *
 * Every figure is computed two ways:
 * - "you paid": the report's dollars from the session file's usage = the fake server's bill
 *   for the same requests, priced from its wire usage (`wireDollars`);
 * - the keeper arm's replay of a keeper recording — rebuilt from the keeper's entries — calibrated
 *   against that recording (its estimator fitted to the recorded usage, within 10%), also when the
 *   keeper ran with model summaries, which land while later requests are in flight;
 * - the counterfactual: "without the keeper ≈ $X" on the keeper recording against the bill of
 *   the run made without it (within 10%), and "with the keeper ≈ $Y" on the bare recording
 *   against the keeper run's bill when the keeper ran with the defaults (within 20%: a
 *   simulation at the other run's request times, the keeper's background compaction not replayed).
 * Pi records no usage for its compaction calls in the session file, so the bills are those of
 * the session's own requests (both runs compact on the second scenario).
 */
import { describe, expect, test } from "bun:test";
import { ARMS } from "../../src/report/arms.ts";
import { reportSession, type SessionReport } from "../../src/report/session-report.ts";
import { moneyLine } from "../../src/report/table.ts";
import { lastUserText, PI_SUMMARIZATION_PROMPT_START, systemText } from "../support/fake-anthropic/classify.ts";
import { defaultSideRouter } from "../support/fake-anthropic/server.ts";
import type { RecordedRequest, SideRouter } from "../support/fake-anthropic/types.ts";
import { recordRun, wireDollars, type RecordedRun } from "../support/report/keeper-recording.ts";
import { generateScenario, type Scenario } from "../support/scenario.ts";

const ARMS_RUN = ARMS.filter((a) => a.name === "bare" || a.name === "keeper");
const report = (name: string, run: RecordedRun): SessionReport => reportSession({ file: name, text: run.text, arms: ARMS_RUN, summaries: "size-model" }).report;
const gap = (a: number, b: number) => Math.abs(a / b - 1);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

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
  const runs: Array<{ scenario: Scenario; contextKeeper?: Record<string, unknown>; sideRouter?: SideRouter; label: string }> = [
    { label: "defaults", scenario: generateScenario({ seed: 31, prompts: 4, stepsPerPrompt: [6, 10], files: 8, fileBytes: [2048, 24576] }) },
    // Both runs compact only without flushes inside the loops: with them the keeper stays under
    // Pi's threshold, and the bare counterfactual of a recording that never compacted does not
    // replay the compactions bare Pi would have made (its "without the keeper" came out 31% above
    // the bare bill: a known limit of the report, issue #22's report).
    { label: "no flush inside loops, compacting", scenario: generateScenario({ seed: 47, prompts: 5, stepsPerPrompt: [8, 14], files: 10, fileBytes: [4096, 40960] }), contextKeeper: { pruning: { loopFlush: { enabled: false } } } },
    // Model summaries land while the next request is in flight: the replay must follow the recording, not simulate.
    { label: 'summarizer.mode "model"', scenario: generateScenario({ seed: 53, prompts: 4, stepsPerPrompt: [6, 10], files: 8, fileBytes: [2048, 24576] }), contextKeeper: { summarizer: { mode: "model" } }, sideRouter: modelSummaries },
  ];
  for (const { scenario, contextKeeper, sideRouter, label } of runs) {
    test(`seed ${scenario.seed} (${label}): you paid = the wire bill; calibrated within 10%; the counterfactual within 10% of the other run's bill`, async () => {
      const bare = await recordRun("bare", { scenario });
      const keeper = await recordRun("keeper", { scenario, ...(contextKeeper ? { contextKeeper } : {}), ...(sideRouter ? { sideRouter } : {}) });
      expect([bare.failed, keeper.failed]).toEqual([0, 0]);
      expect(keeper.main.length).toBe(bare.main.length);
      const onKeeper = report("keeper.jsonl", keeper);
      const onBare = report("bare.jsonl", bare);
      // The session's own requests and the keeper's summarizer calls; Pi records no usage for its
      // compaction calls in the file (both runs compact on the second scenario).
      const isCompaction = (r: RecordedRequest) => systemText(r.body).includes(PI_SUMMARIZATION_PROMPT_START);
      const summarizerCalls = keeper.side.filter((r) => !isCompaction(r));
      expect(summarizerCalls.length > 0).toBe(sideRouter !== undefined);
      const billKeeper = wireDollars(keeper.main) + wireDollars(summarizerCalls);
      const billBare = wireDollars(bare.main);

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
      expect(gap(onKeeper.money.bare_usd, billBare)).toBeLessThan(0.1);
      expect(onKeeper.money.saved_usd).toBeCloseTo(onKeeper.money.bare_usd - onKeeper.money.paid_usd, 12);
      expect(onBare.calibration.total_error).toBeLessThan(0.1);
      // The other direction is looser: a simulation of the keeper with the default settings, at the
      // bare run's request times (the gate prices with them), a bare recording's compactions replayed
      // where Pi made them while the live keeper compacted in the background at its own point: 4–11%
      // across runs. Not comparable when the keeper ran with other settings (model summaries).
      if (!contextKeeper || label.startsWith("no flush inside loops")) expect(gap(onBare.money.keeper_usd!, billKeeper)).toBeLessThan(0.2);

      const line = moneyLine(onKeeper);
      expect(line).toMatch(/^you paid \$\d+\.\d\d \(recorded with the keeper\); without the keeper ≈ \$\d+\.\d\d \(≈ \$\d+\.\d\d saved, \d+%\)$/);
      console.log(
        `[report-keeper] seed ${scenario.seed} (${label}), ${keeper.main.length} requests: keeper run billed $${billKeeper.toFixed(4)}, bare run $${billBare.toFixed(4)}; ` +
          `on the keeper recording: paid $${onKeeper.money.paid_usd.toFixed(4)}, replayed $${onKeeper.money.replayed_paid_usd.toFixed(4)} (calibration ${pct(onKeeper.calibration.total_error)}, ` +
          `${pct(onKeeper.calibration.total_error_cross_validated ?? Number.NaN)} cross-validated), without the keeper ≈ $${onKeeper.money.bare_usd.toFixed(4)} (${pct(gap(onKeeper.money.bare_usd, billBare))} from the bare bill); ` +
          `on the bare recording: calibration ${pct(onBare.calibration.total_error)}, with the keeper ≈ $${onBare.money.keeper_usd!.toFixed(4)} (${pct(gap(onBare.money.keeper_usd!, billKeeper))} from the keeper bill)`,
      );
    }, 300_000);
  }
});
