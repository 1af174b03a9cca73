import { describe, expect, test } from "bun:test";
import { guardCurrentLoop, renderContext } from "./pipeline.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { config, frozen, record, stateWith } from "../../test/support/prune/fixtures.ts";
import { fakeThinkingStrip } from "../../test/support/property/session-arbitrary.ts";

const msgs = frozen([
  user("first", 1),
  assistant([thinking("t1"), call("a", "read", { path: "x" })], 10),
  result("a", "read", "A".repeat(100), 11),
  assistant([thinking("t2"), call("e", "edit", { path: "x", oldText: "q" })], 12),
  result("e", "edit", "no match", 13, true),
  assistant([thinking("t3"), text("answer")], 14),
  user("second", 20),
  assistant([thinking("t4"), call("b", "read")], 21),
  result("b", "read", "B", 22),
]);


describe("renderContext", () => {
  test("empty state: the very same array", () => {
    expect(renderContext({ messages: msgs, state: stateWith({}), config })).toBe(msgs);
    expect(renderContext({ messages: msgs, state: stateWith({}), config, phases: { thinkingStrip: fakeThinkingStrip } })).toBe(msgs);
  });

  test("composes stub, purge and thinking strip; the current loop keeps its objects", () => {
    const state = stateWith({
      records: [record("batch:a@10", ["a@10#0"], "x is a file")],
      stubbed: ["a@10#0"],
      purged: ["e@12#0"],
      boundary: 100, // newer than everything: the fake strip would strip all, the guard keeps the loop
    });
    const out = renderContext({ messages: msgs, state, config, phases: { thinkingStrip: fakeThinkingStrip } });
    expect(out.length).toBe(msgs.length);
    expect(JSON.stringify(out[2])).toContain("ref=a@10#0 (pattern or startLine/endLine for part): x is a file");
    expect(JSON.stringify(out[3])).toContain("_purged");
    expect(JSON.stringify(out.slice(0, 6))).not.toContain('"thinking"');
    expect(out[7]).toBe(msgs[7]);
    expect(out[8]).toBe(msgs[8]);
    expect(renderContext({ messages: out, state, config, phases: { thinkingStrip: fakeThinkingStrip } })).toEqual(out);
  });

  test("the thinking phase gets the persisted boundary and whether the branch has flushed", () => {
    const seen: unknown[] = [];
    const spy = (m: ContextMessage[], t: unknown) => {
      seen.push(t);
      return m;
    };
    renderContext({ messages: msgs, state: stateWith({ boundary: 12 }), config, phases: { thinkingStrip: spy } });
    const never = stateWith({});
    never.frontier = { ...never.frontier, flushSeq: 0 };
    renderContext({ messages: msgs, state: never, config, phases: { thinkingStrip: spy } });
    expect(seen).toEqual([
      { boundaryTimestamp: 12, hasFlushed: true },
      { boundaryTimestamp: undefined, hasFlushed: false },
    ]);
  });

  test("disabled pruning skips the pruning phases (the sweep still runs)", () => {
    const state = stateWith({ records: [record("batch:a@10", ["a@10#0"], "s")], stubbed: ["a@10#0"] });
    expect(renderContext({ messages: msgs, state, config: { ...config, enabled: false } })).toBe(msgs);
  });
});

describe("guardCurrentLoop", () => {
  test("restores loop messages an outside phase changed, ignores a length change", () => {
    const changedLoop = msgs.map((m, i) => (i === 8 ? { ...m } : m)) as ContextMessage[];
    expect(guardCurrentLoop(msgs, changedLoop)).toBe(msgs);
    const changedHistory = msgs.map((m, i) => (i === 1 || i === 8 ? { ...m } : m)) as ContextMessage[];
    const g = guardCurrentLoop(msgs, changedHistory);
    expect(g[1]).toBe(changedHistory[1]);
    expect(g[8]).toBe(msgs[8]);
    expect(guardCurrentLoop(msgs, msgs.slice(1))).toBe(msgs);
  });
});
