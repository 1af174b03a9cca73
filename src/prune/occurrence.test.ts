import { describe, expect, test } from "bun:test";
import {
  batchKeyOf,
  callKeysOf,
  currentLoopStart,
  liveOccurrenceKeys,
  pairToolCalls,
} from "./occurrence.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";

describe("occurrence keys", () => {
  test("count tool-call blocks only, so thinking, text or other-id calls do not shift them", () => {
    const m = assistant([thinking("hm"), text("x"), call("a", "read"), text("y"), call("b", "bash")], 100);
    expect(callKeysOf(m)).toEqual(["a@100#0", "b@100#0"]);
    expect(batchKeyOf("a", 100)).toBe("batch:a@100");
  });

  test("a reused provider id gets a distinct key per occurrence", () => {
    const msgs = [
      user("go", 1),
      assistant([call("bash_1", "bash")], 10),
      result("bash_1", "bash", "first", 11),
      assistant([call("bash_1", "bash")], 20),
      result("bash_1", "bash", "second", 21),
    ];
    const p = pairToolCalls(msgs);
    expect(p.callKeyByResultIndex.get(2)).toBe("bash_1@10#0");
    expect(p.callKeyByResultIndex.get(4)).toBe("bash_1@20#0");
    expect(p.orphanResults).toEqual([]);
    expect(p.unansweredCalls).toEqual([]);
  });

  test("the same id twice in one message pairs in order", () => {
    const msgs = [assistant([call("x", "read"), call("x", "read")], 5), result("x", "read", "1", 6), result("x", "read", "2", 7)];
    const p = pairToolCalls(msgs);
    expect(p.callKeyByResultIndex.get(1)).toBe("x@5#0");
    expect(p.callKeyByResultIndex.get(2)).toBe("x@5#1");
  });

  test("a result pairs only with the nearest preceding assistant (older assistant = orphan on the wire)", () => {
    const msgs = [
      assistant([call("a", "read")], 10),
      assistant([call("b", "read")], 20),
      result("b", "read", "ok", 21),
      result("a", "read", "late", 22),
    ];
    const p = pairToolCalls(msgs);
    expect(p.callKeyByResultIndex.get(2)).toBe("b@20#0");
    expect(p.orphanResults).toEqual([3]);
    expect(p.unansweredCalls.map((c) => c.key)).toEqual(["a@10#0"]);
  });

  test("a user message between call and result breaks the pairing; a system message does not", () => {
    const sys = { role: "system", content: "s", timestamp: 12 } as never;
    const msgs = [
      assistant([call("a", "read"), call("b", "read")], 10),
      sys,
      result("a", "read", "ok", 13),
      user("interrupt", 14),
      result("b", "read", "late", 15),
    ];
    const p = pairToolCalls(msgs);
    expect(p.callKeyByResultIndex.get(2)).toBe("a@10#0");
    expect(p.orphanResults).toEqual([4]);
    expect(p.unansweredCalls.map((c) => c.key)).toEqual(["b@10#0"]);
  });

  test("calls of aborted/error assistants are not replayed: their results are orphans, the calls are not 'unanswered'", () => {
    const msgs = [assistant([call("a", "read")], 10, { stopReason: "aborted" }), result("a", "read", "x", 11)];
    const p = pairToolCalls(msgs);
    expect(p.orphanResults).toEqual([1]);
    expect(p.unansweredCalls).toEqual([]);
    expect(p.calls[0].replayed).toBe(false);
  });

  test("currentLoopStart is just after the last user message, 0 without one", () => {
    const msgs = [user("a", 1), assistant([text("hi")], 2), user("b", 3), assistant([call("x", "read")], 4)];
    expect(currentLoopStart(msgs)).toBe(3);
    expect(currentLoopStart([assistant([text("x")], 1)])).toBe(0);
    expect(currentLoopStart([])).toBe(0);
  });

  test("liveOccurrenceKeys lists every tool call present", () => {
    const msgs = [assistant([call("a", "read"), call("b", "read")], 10), assistant([call("a", "read")], 30)];
    expect([...liveOccurrenceKeys(msgs)].sort()).toEqual(["a@10#0", "a@30#0", "b@10#0"]);
  });
});

describe("key stability", () => {
  test("dropping an unanswered call keeps the keys of the other calls", () => {
    const full = assistant([call("bash_1", "bash"), call("read_1", "read"), call("read_1", "read")], 7);
    const swept = assistant([call("read_1", "read"), call("read_1", "read")], 7);
    expect(callKeysOf(full)).toEqual(["bash_1@7#0", "read_1@7#0", "read_1@7#1"]);
    expect(callKeysOf(swept)).toEqual(["read_1@7#0", "read_1@7#1"]);
  });
});
