import { describe, expect, test } from "bun:test";
import { entriesSeenAt, type BranchEntry } from "./recorded-keeper.ts";

const at = (ms: number) => new Date(ms).toISOString();
const message = (id: string, ms: number): BranchEntry => ({ id, parentId: null, type: "message", timestamp: at(ms) });
const flush = (id: string, ms: number, summaries: number): BranchEntry => ({ id, parentId: null, type: "custom", customType: "context-keeper/flush", timestamp: at(ms), data: { version: 2, summaries: Array.from({ length: summaries }, () => ({})) } });

describe("which of the keeper's entries a recorded request saw", () => {
  const SENT = 10_000;
  test("entries written before the request was stamped count; a flush that finished while it was in flight counts from the next request on", () => {
    const branch = [message("u", 1_000), flush("f1", 5_000, 3), message("r", 9_000), flush("f2", 10_033, 4)];
    expect(entriesSeenAt(branch, SENT).map((e) => e.id)).toEqual(["u", "f1", "r"]);
    expect(entriesSeenAt(branch, 10_033).map((e) => e.id)).toEqual(["u", "f1", "r", "f2"]);
  });
  test("a cold re-plan's entry (no summaries, closing the branch, written in before_provider_request) counts for its own request", () => {
    expect(entriesSeenAt([message("r", 9_000), flush("cold", 10_004, 0)], SENT).map((e) => e.id)).toEqual(["r", "cold"]);
    // The same entry with a message after it was a flush for earlier requests, in flight then: it stays out.
    expect(entriesSeenAt([flush("late", 10_004, 0), message("r", 10_010)], SENT).map((e) => e.id)).toEqual(["r"]);
    expect(entriesSeenAt([message("r", 9_000), flush("f", 10_004, 2)], SENT).map((e) => e.id)).toEqual(["r"]);
  });
  test("the flush of the request's own answer, though it summarized nothing (flushes inside the loop took every batch), is not a cold re-plan: it was decided after the answer came", () => {
    const decided = (id: string, ms: number, lastFlushAt: number): BranchEntry => ({ ...flush(id, ms, 0), data: { version: 2, summaries: [], frontierDelta: { from: 3, flushSeq: 4, lastFlushAt } } });
    // Written at message_end, 14 ms after the stamp, before Pi stores the answer.
    expect(entriesSeenAt([message("r", 9_000), decided("end", 10_014, 10_013)], SENT).map((e) => e.id)).toEqual(["r"]);
    // A cold re-plan: decided at the request's render, before the stamp, written just after it.
    expect(entriesSeenAt([message("r", 9_000), decided("cold", 10_004, 9_998)], SENT).map((e) => e.id)).toEqual(["r", "cold"]);
  });
  test("other entries are never left out, whatever their time", () => {
    const branch = [message("u", 1_000), { id: "c", parentId: null, type: "compaction", timestamp: at(20_000) }, { id: "x", parentId: null, type: "custom", customType: "other-ext/state", timestamp: at(30_000) }];
    expect(entriesSeenAt(branch, SENT).map((e) => e.id)).toEqual(["u", "c", "x"]);
  });
});
