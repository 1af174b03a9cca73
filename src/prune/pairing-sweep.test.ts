import { describe, expect, test } from "bun:test";
import { pairToolCalls } from "./occurrence.ts";
import { pairingSweep } from "./pairing-sweep.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { config, frozen, stateWith } from "../../test/support/prune/fixtures.ts";

const ctx = { state: stateWith({}), config };

describe("pairingSweep", () => {
  test("well-paired input: same reference", () => {
    const msgs = frozen([user("p", 1), assistant([call("a", "read")], 2), result("a", "read", "r", 3), assistant([text("x")], 4), user("q", 5)]);
    expect(pairingSweep(msgs, ctx)).toBe(msgs);
  });

  test("drops orphan results and unanswered call blocks in history", () => {
    const msgs = frozen([
      user("p", 1),
      assistant([text("let me look"), call("a", "read"), call("b", "read")], 2),
      result("a", "read", "r", 3),
      result("zz", "read", "stray", 4),
      assistant([text("x")], 5),
      user("q", 6),
    ]);
    const out = pairingSweep(msgs, ctx);
    expect(out.length).toBe(5);
    expect((out[1] as { content: unknown[] }).content).toEqual([text("let me look"), call("a", "read")]);
    expect(out.map((m) => m.timestamp)).toEqual([1, 2, 3, 5, 6]);
    const p = pairToolCalls(out);
    expect(p.orphanResults).toEqual([]);
    expect(p.unansweredCalls).toEqual([]);
    expect(pairingSweep(out, ctx)).toBe(out);
  });

  test("an assistant left with only thinking is dropped whole", () => {
    const msgs = frozen([user("p", 1), assistant([thinking("hm"), call("a", "read")], 2), user("q", 3)]);
    expect(pairingSweep(msgs, ctx)).toEqual([msgs[0], msgs[2]]);
  });

  test("the current tool loop is left alone even with an unanswered call", () => {
    const msgs = frozen([user("p", 1), assistant([call("a", "read"), call("b", "read")], 2), result("a", "read", "r", 3)]);
    expect(pairingSweep(msgs, ctx)).toBe(msgs);
  });

  test("results after an aborted assistant are orphans; the aborted message itself stays (pi-ai skips it)", () => {
    const msgs = frozen([
      user("p", 1),
      assistant([call("a", "read")], 2, { stopReason: "aborted" }),
      result("a", "read", "r", 3),
      user("q", 4),
    ]);
    expect(pairingSweep(msgs, ctx)).toEqual([msgs[0], msgs[1], msgs[3]]);
  });
});
