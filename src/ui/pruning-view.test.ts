/** `/keeper stats`'s lines (`pruning-view.ts`). */
import { describe, expect, test } from "bun:test";
import { NO_UNAPPLIED_SPEND } from "../compaction/spend-entry.ts";
import { emptyState } from "../state/schema.ts";
import { formatStats, unappliedCompactionLine } from "./pruning-view.ts";

describe("/keeper stats: background compaction summaries never applied", () => {
  test("left out when there are none; otherwise their calls, tokens and dollars, said when part is estimated", () => {
    const state = emptyState();
    expect(formatStats(state, undefined, { unappliedCompaction: NO_UNAPPLIED_SPEND }).join("\n")).not.toContain("never applied");
    const lines = formatStats(state, undefined, { unappliedCompaction: { jobs: 2, calls: 3, inputTokens: 70_000, outputTokens: 2_000, cost: 0.24, estimated: true } });
    const line = lines.find((l) => l.includes("never applied"))!;
    expect(line).toStartWith("compaction summaries made in the background and never applied: 2 (3 calls), 70,000 input + 2,000 output tokens, $0.240 (part estimated");
    expect(unappliedCompactionLine({ jobs: 1, calls: 1, inputTokens: 10, outputTokens: 1, cost: 0.01, estimated: false })).not.toContain("estimated");
  });
});
