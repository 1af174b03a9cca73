import { describe, expect, test } from "bun:test";
import type { WireMessage } from "../../test/support/fake-anthropic/types.ts";
import type { LookbackReport } from "./lookback-model.ts";
import { formatLookbackTable, lookbackGoals, lookbackRows, taskCost, type LookbackResult } from "./lookback-table.ts";
import { measureRun } from "./measure.ts";
import { recordedRequest } from "./recorded-request.ts";

const prompt: WireMessage = { role: "user", content: [{ type: "text", text: "Task" }] };
const emptyReport = (extra: Partial<LookbackReport> = {}): LookbackReport => ({ outcomes: [], recoverySeqs: [], recallResultChars: 0, rerunResultChars: 0, rerecalls: 0, recallMisses: 0, factNotInOrigin: [], misaligned: 0, exhausted: 0, ...extra });
const result = (arm: string, write: number, o: Partial<LookbackResult> = {}): LookbackResult => ({
  seed: 1,
  density: "some",
  arm,
  measure: measureRun([recordedRequest({ kind: "main", messages: [prompt], usage: [0, 0, write, 1] })]),
  recoveryOutputTokens: 0,
  report: emptyReport(),
  heldOut: true,
  ...o,
});

describe("looking-back table", () => {
  test("task cost adds the recovery turns' output at 5; ratios to the same seed and density", () => {
    const bare = result("bare", 800);
    const keeper = result("keeper", 240, { recoveryOutputTokens: 20, report: emptyReport({ recoverySeqs: [3, 7] }) });
    expect(taskCost(keeper)).toBe(1.25 * 240 + 5 * 20);
    const rows = lookbackRows([bare, keeper, result("keeper", 240, { density: "many" })]);
    expect(rows[1]!.vsBare).toBeCloseTo(400 / 1000, 9);
    expect(rows[1]!.extraRequests).toBe(2);
    expect(rows[2]!.vsBare).toBeUndefined();
    expect(formatLookbackTable([bare, keeper])).toContain("| 1 | some | keeper | 0.400 | – | 0.400 |");
  });

  test("goals per density: some ≤ 0.42× bare", () => {
    const bare = result("bare", 1000);
    expect(lookbackGoals([bare, result("keeper", 330)])[0]).toContain("all goals met");
    expect(lookbackGoals([bare, result("keeper", 450)])[0]).toContain("missed: ≤ 0.42× bare");
  });
});
