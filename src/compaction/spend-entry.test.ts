/** The spend entry: its schema round-trips every field; the sum reads each job once, malformed entries not at all. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { NO_UNAPPLIED_SPEND, SPEND_ENTRY_TYPE, spendEntryData, spendEntrySchema, spendOf, spendRecorded, unappliedSpendOf } from "./spend-entry.ts";

const custom = (data: unknown, customType = SPEND_ENTRY_TYPE) => ({ type: "custom", customType, data });

describe("spend entry", () => {
  test("property: every field round-trips through JSON and the schema", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.double({ min: 0, max: 1e3, noNaN: true }),
        fc.boolean(),
        (jobId, reason, calls, inputTokens, outputTokens, cost, estimated) => {
          const data = spendEntryData(jobId, reason, { calls, inputTokens, outputTokens, cost, ...(estimated ? { estimated: true as const } : {}) });
          expect(spendEntrySchema.parse(JSON.parse(JSON.stringify(data)))).toEqual(data);
          expect(spendOf(custom(JSON.parse(JSON.stringify(data))))).toEqual(data);
        },
      ),
    );
  });

  test("the sum: one per job, every branch of the file; other and malformed entries ignored", () => {
    const a = spendEntryData("a", "superseded", { calls: 1, inputTokens: 100, outputTokens: 10, cost: 0.5 });
    const b = spendEntryData("b", "shutdown", { calls: 2, inputTokens: 50, outputTokens: 0, cost: 0.25, estimated: true });
    const entries = [custom(a), custom(b), custom(a), custom({ ...a, jobId: "c", cost: -1 }), custom(a, "context-keeper/flush"), { type: "message", data: a }];
    expect(unappliedSpendOf(entries)).toEqual({ jobs: 2, calls: 3, inputTokens: 150, outputTokens: 10, cost: 0.75, estimated: true });
    expect(unappliedSpendOf([])).toEqual(NO_UNAPPLIED_SPEND);
    expect(spendRecorded(entries, "b")).toBe(true);
    expect(spendRecorded(entries, "c")).toBe(false);
  });
});
