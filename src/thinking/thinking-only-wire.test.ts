/**
 * What pi-ai's Anthropic serializer does with an assistant message whose thinking was its only
 * content, after the strip leaves it with `content: []`: it sends no message for it at all.
 */
import { describe, expect, test } from "bun:test";
import { stripOldThinking } from "./strip.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, text, thinking, user } from "../../test/support/message-factory.ts";
import { anthropicPayload } from "../../test/support/thinking/anthropic-wire.ts";

describe("thinking-only assistant messages on the Anthropic wire", () => {
  test("a stripped thinking-only message leaves the wire; neighbours are sent as they were", async () => {
    const msgs: ContextMessage[] = [
      user("first", 10),
      assistant([thinking("only thoughts", "sig-x")], 20, { stopReason: "length" }),
      user("second", 30),
      assistant([thinking("answer", "sig-y"), text("hello")], 40),
    ];
    const raw = await anthropicPayload(msgs);
    const sent = await anthropicPayload(stripOldThinking(msgs, { enabled: true, keepLastTurns: 1 }));
    expect(raw.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    // Pi does not merge the two user turns; the API combines consecutive same-role turns itself.
    expect(sent.messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
    expect(JSON.stringify(sent.messages[2])).toBe(JSON.stringify(raw.messages[3]));
  });

  test("pi-ai itself sends an empty assistant reply the same way (no block, no message)", async () => {
    const sent = await anthropicPayload([user("a", 10), assistant([], 20), user("b", 30)]);
    expect(sent.messages.map((m) => m.role)).toEqual(["user", "user"]);
  });

  test("cache marks sit on the system block, the last tool and the last message's last block only", async () => {
    const sent = await anthropicPayload([user("a", 10), assistant([thinking("t"), text("x")], 20), user("b", 30)]);
    const marked: string[] = [];
    sent.system?.forEach((b, i) => b.cache_control && marked.push(`system[${i}]`));
    sent.tools?.forEach((b, i) => b.cache_control && marked.push(`tools[${i}]`));
    sent.messages.forEach((m, i) => {
      if (Array.isArray(m.content)) m.content.forEach((b, j) => b.cache_control && marked.push(`messages[${i}][${j}]`));
    });
    expect(marked).toEqual(["system[0]", `tools[${sent.tools!.length - 1}]`, `messages[${sent.messages.length - 1}][0]`]);
  });
});
