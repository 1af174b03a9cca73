import { describe, expect, test } from "bun:test";
import type { Message, SystemMessage } from "@earendil-works/pi-ai";
import { flattenRequest, type FlatBytesMemo } from "../cache/flatten.ts";
import { serializeForAnthropic } from "./anthropic-wire.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";

const model = { provider: "anthropic", api: "anthropic-messages", id: "claude-sonnet-4-5" };
const MARK = { type: "ephemeral" as const };

describe("serializeForAnthropic", () => {
  test("pi-ai mark placement: last tool, system block, last block of the last user message", () => {
    const system: SystemMessage = {
      role: "system",
      content: "be brief",
      sections: { cwd: "/p" },
      toolsAdded: [
        { name: "read", description: "r", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
        { name: "bash", description: "b", parameters: { type: "object", properties: {} } },
      ],
      timestamp: 0,
    };
    const body = serializeForAnthropic([system, user("hi", 1), assistant([text("hello")], 2), user("more", 3)], { model });
    expect(body.tools?.map((t) => t.cache_control)).toEqual([undefined, MARK]);
    expect(body.system).toEqual([{ type: "text", text: "be brief\n\n/p", cache_control: MARK }]);
    expect(body.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "more", cache_control: MARK }] });
    expect(body.messages[0]).toEqual({ role: "user", content: [{ type: "text", text: "hi" }] });
  });

  test("consecutive tool results merge; error/aborted assistants are skipped; orphans get a synthetic result", () => {
    const msgs: Message[] = [
      user("go", 1),
      assistant([call("a", "read"), call("b", "read")], 2),
      result("a", "read", "A", 3),
      result("b", "read", "B", 4),
      assistant([text("partial"), call("x", "bash")], 5, { stopReason: "error" }),
      user("again", 6),
      assistant([call("c", "bash")], 7),
      user("interrupt", 8), // c never answered
    ];
    const body = serializeForAnthropic(msgs, { model });
    expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "user", "assistant", "user", "user"]);
    expect(body.messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: "a", content: "A", is_error: false },
      { type: "tool_result", tool_use_id: "b", content: "B", is_error: false },
    ]);
    expect(body.messages[5].content).toEqual([{ type: "tool_result", tool_use_id: "c", content: "No result provided", is_error: true }]);
    expect(JSON.stringify(body)).not.toContain("partial");
  });

  test("thinking: kept with signature for the same model, dropped for another, unsigned → text", () => {
    const same = assistant([thinking("hmm", "sig"), text("ok")], 2);
    const other = assistant([thinking("theirs", "s2"), text("yo")], 4, { model: "gpt-5", provider: "openai" });
    const unsigned = assistant([{ type: "thinking", thinking: "loose" }, text("k")], 6);
    const body = serializeForAnthropic([user("a", 1), same, user("b", 3), other, user("c", 5), unsigned, user("d", 7)], { model });
    expect(body.messages[1].content).toEqual([{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "text", text: "ok" }]);
    expect(body.messages[3].content).toEqual([{ type: "text", text: "yo" }]);
    expect(body.messages[5].content).toEqual([{ type: "text", text: "loose" }, { type: "text", text: "k" }]);
  });

  test("long retention marks with ttl 1h; a trailing assistant message gets no message mark", () => {
    const body = serializeForAnthropic([user("a", 1), assistant([text("b")], 2)], {
      model,
      cacheRetention: "long",
      unknownPrompt: { toolsText: "tools", systemText: "sys" },
    });
    expect(body.tools?.[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(body.system).toEqual([{ type: "text", text: "sys", cache_control: { type: "ephemeral", ttl: "1h" } }]);
    expect(JSON.stringify(body.messages)).not.toContain("cache_control");
  });

  test("empty user text is dropped, foreign tool-call ids are normalized with their results", () => {
    const foreign = assistant([call("call|1:x", "read")], 2, { model: "gpt-5", provider: "openai" });
    const body = serializeForAnthropic([user("  ", 0), user("go", 1), foreign, result("call|1:x", "read", "r", 3)], { model });
    expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect((body.messages[1].content as Array<{ id?: string }>)[0].id).toBe("call_1_x");
    expect((body.messages[2].content as Array<{ tool_use_id?: string }>)[0].tool_use_id).toBe("call_1_x");
  });
});

describe("blocks shared between bodies (each built once per source block)", () => {
  test("the same source block gives the same wire block in every body; a mark goes on a copy, never on the shared block", () => {
    const history: Message[] = [user("go", 1), assistant([call("a", "read")], 2), result("a", "read", "A".repeat(500), 3)];
    const first = serializeForAnthropic(history, { model });
    const later = serializeForAnthropic([...history, assistant([text("done")], 4), user("next", 5)], { model });
    const resultBlock = (b: typeof first) => (b.messages[2]!.content as Array<Record<string, unknown>>)[0]!;
    // In the first body the tool result is the last block: marked, on a copy.
    expect(resultBlock(first).cache_control).toEqual(MARK);
    expect(resultBlock(later).cache_control).toBeUndefined();
    expect(resultBlock(later)).not.toBe(resultBlock(first));
    expect(serializeForAnthropic([...history, user("x", 6)], { model }).messages[2]!.content).toEqual(later.messages[2]!.content);
    expect((serializeForAnthropic([...history, user("x", 6)], { model }).messages[2]!.content as unknown[])[0]).toBe((later.messages[2]!.content as unknown[])[0]);
    expect((later.messages[1]!.content as unknown[])[0]).toBe((first.messages[1]!.content as unknown[])[0]);
  });
  test("flattening with the bytes memo gives the very bytes flattening without it gives", () => {
    const history: Message[] = [user("go", 1), assistant([thinking("hm", "sig"), call("a", "read")], 2), result("a", "read", 'x "quoted"\n', 3), user("more", 4)];
    const memo: FlatBytesMemo = new WeakMap();
    for (const n of [2, 3, 4, 4]) {
      const body = serializeForAnthropic(history.slice(0, n), { model });
      expect(flattenRequest(body, memo).map((b) => b.bytes)).toEqual(flattenRequest(body).map((b) => b.bytes));
    }
  });
});
