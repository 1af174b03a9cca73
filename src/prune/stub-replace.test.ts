import { describe, expect, test } from "bun:test";
import { stubReplace } from "./stub-replace.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { config, frozen, record, stateWith } from "../../test/support/prune/fixtures.ts";

function session(): ContextMessage[] {
  return frozen([
    user("go", 1),
    assistant([call("r1", "read", { path: "a.ts" }), call("r2", "read", { path: "b.ts" })], 10),
    result("r1", "read", "AAAA".repeat(50), 11),
    { ...result("r2", "read", "BBBB".repeat(50), 12), details: { lines: 7 } } as ContextMessage,
    assistant([text("done")], 13),
    user("next", 20),
    assistant([call("r3", "read", { path: "c.ts" })], 21),
    result("r3", "read", "CCCC", 22),
  ]);
}

describe("stubReplace", () => {
  test("empty state: same array reference", () => {
    const msgs = session();
    expect(stubReplace(msgs, { state: stateWith({}), config })).toBe(msgs);
  });

  test("stubbed results keep every field but content; first stub of a batch carries the summary", () => {
    const msgs = session();
    const state = stateWith({ records: [record("batch:r1@10", ["r1@10#0", "r2@10#0"], "read a.ts and b.ts")], stubbed: ["r1@10#0", "r2@10#0"] });
    const out = stubReplace(msgs, { state, config });
    expect(out).not.toBe(msgs);
    expect(out.length).toBe(msgs.length);
    const r1 = out[2] as Record<string, unknown>;
    const r2 = out[3] as Record<string, unknown>;
    expect(r1).toEqual({
      ...(msgs[2] as object),
      content: [{ type: "text", text: "[context-keeper] output pruned; keeper_recall ref=r1@10#0 (pattern or startLine/endLine for part): read a.ts and b.ts" }],
    });
    expect(r2.details).toEqual({ lines: 7 });
    expect(r2.toolCallId).toBe("r2");
    expect(r2.isError).toBe(false);
    expect(r2.timestamp).toBe(12);
    expect((r2.content as { text: string }[])[0].text).toBe("[context-keeper] output pruned; keeper_recall ref=r2@10#0 (pattern or startLine/endLine for part): summarized with ref=r1@10#0 (same tool batch).");
    // untouched messages keep their identity
    for (const i of [0, 1, 4, 5, 6, 7]) expect(out[i]).toBe(msgs[i]);
  });

  test("inside the current tool loop only results change (a budget flush's stubs); assistant messages stay the same objects", () => {
    const msgs = session();
    const state = stateWith({ records: [record("batch:r3@21", ["r3@21#0"], "c")], stubbed: ["r3@21#0"] });
    const out = stubReplace(msgs, { state, config });
    expect(out).not.toBe(msgs);
    const changed = out.flatMap((m, i) => (m === msgs[i] ? [] : [i]));
    expect(changed).toHaveLength(1);
    expect(out[changed[0]!]!.role).toBe("toolResult");
    expect(JSON.stringify(out[changed[0]!])).toContain("ref=r3@21#0");
  });

  test("already-stubbed input renders to the same reference (idempotent)", () => {
    const state = stateWith({ records: [record("batch:r1@10", ["r1@10#0"], "s")], stubbed: ["r1@10#0"] });
    const once = stubReplace(session(), { state, config });
    expect(stubReplace(once, { state, config })).toBe(once);
  });

  test("a reused provider id is stubbed only in the occurrence that was summarized", () => {
    const msgs = frozen([
      user("a", 1),
      assistant([call("bash_1", "bash")], 10),
      result("bash_1", "bash", "old output", 11),
      assistant([text("ok")], 12),
      user("b", 13),
      assistant([call("bash_1", "bash")], 20),
      result("bash_1", "bash", "new output", 21),
      assistant([text("ok")], 22),
      user("c", 23),
    ]);
    const state = stateWith({ records: [record("batch:bash_1@10", ["bash_1@10#0"], "old")], stubbed: ["bash_1@10#0"] });
    const out = stubReplace(msgs, { state, config });
    expect(JSON.stringify(out[2])).toContain("output pruned");
    expect(out[6]).toBe(msgs[6]);
  });

  test("aliased duplicates point at the original's ref instead of repeating its summary", () => {
    const msgs = frozen([
      user("a", 1),
      assistant([call("x", "read")], 10),
      result("x", "read", "same", 11),
      assistant([call("y", "read")], 12),
      result("y", "read", "same", 13),
      user("b", 14),
    ]);
    const state = stateWith({ records: [record("batch:x@10", ["x@10#0"], "the file")], stubbed: ["x@10#0"], aliases: { "y@12#0": "x@10#0" } });
    const out = stubReplace(msgs, { state, config });
    const t = (out[4] as { content: { text: string }[] }).content[0].text;
    expect(t).toBe("[context-keeper] output pruned; keeper_recall ref=y@12#0 (pattern or startLine/endLine for part): identical to the output of ref=x@10#0.");
    expect(t).not.toContain("the file");
    const original = (out[2] as { content: { text: string }[] }).content[0].text;
    expect(original).toBe("[context-keeper] output pruned; keeper_recall ref=x@10#0 (pattern or startLine/endLine for part): the file");
  });
});
