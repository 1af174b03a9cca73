/**
 * "You paid" on a keeper recording counts the keeper's background compaction summaries it
 * never applied: their spend entries (`src/compaction/spend-entry.ts`), one per job, wherever
 * they are in the file; an applied summary is charged once, through Pi's compaction entry.
 */
import { describe, expect, test } from "bun:test";
import { spendEntryData } from "../compaction/spend-entry.ts";
import { ARMS } from "./arms.ts";
import { keeperRecordingOf } from "./recorded-with.ts";
import { reportSession } from "./session-report.ts";
import { compactionSession } from "../../test/support/report/compaction-session.ts";

const ARMS_RUN = ARMS.filter((a) => a.name === "bare" || a.name === "keeper");
const report = (text: string) => reportSession({ file: "k.jsonl", text, arms: ARMS_RUN, summaries: "size-model", contextWindow: () => 200_000 }).report;

/** The session's text with these spend entries appended at the leaf. */
function withSpend(text: string, spends: ReturnType<typeof spendEntryData>[]): string {
  const lines = text.trimEnd().split("\n");
  let parentId = (JSON.parse(lines[lines.length - 1]!) as { id: string }).id;
  spends.forEach((data, i) => {
    const id = `spend${i}`;
    lines.push(JSON.stringify({ type: "custom", customType: "context-keeper/compaction-spend", id, parentId, timestamp: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString(), data }));
    parentId = id;
  });
  return `${lines.join("\n")}\n`;
}

describe("the keeper's background summaries never applied, in the report", () => {
  const base = compactionSession({ rounds: [4, 6], resultChars: 8_000, keeperEntry: true }).text;
  const superseded = spendEntryData("job-1", "superseded", { calls: 1, inputTokens: 40_000, outputTokens: 2_000, cost: 0.15 });
  const atShutdown = spendEntryData("job-2", "shutdown", { calls: 2, inputTokens: 30_000, outputTokens: 0, cost: 0.09, estimated: true });

  test("'you paid' and the keeper arm's replay of it include their dollars, each job once", () => {
    const without = report(base);
    const withIt = report(withSpend(base, [superseded, atShutdown, superseded]));
    expect(without.recorded_with).toBe("keeper");
    expect(withIt.money.paid_usd - without.money.paid_usd).toBeCloseTo(0.24, 12);
    expect(withIt.money.replayed_paid_usd - without.money.replayed_paid_usd).toBeCloseTo(0.24, 12);
    expect(withIt.arms.keeper!.usd_compaction - without.arms.keeper!.usd_compaction).toBeCloseTo(0.24, 12);
    expect(withIt.money.saved_usd! - without.money.saved_usd!).toBeCloseTo(-0.24, 12);
    // The counterfactual is bare Pi's own: untouched.
    expect(withIt.money.bare_usd).toBe(without.money.bare_usd);
  });

  test("the recording's reader sums them as /keeper stats does", () => {
    const entries = withSpend(base, [superseded, atShutdown]).trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(keeperRecordingOf(entries).unappliedCompaction).toEqual({ jobs: 2, calls: 3, inputTokens: 70_000, outputTokens: 2_000, cost: 0.24, estimated: true });
  });
});
