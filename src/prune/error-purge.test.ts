import { describe, expect, test } from "bun:test";
import type { AssistantMessage } from "../session/messages.ts";
import { errorPurge } from "./error-purge.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { config, frozen, stateWith } from "../../test/support/prune/fixtures.ts";

const msgs = frozen([
  user("go", 1),
  assistant([thinking("t"), call("e1", "edit", { path: "a.ts", oldText: "x".repeat(500) }), call("ok", "read", { path: "b" })], 10),
  result("e1", "edit", "oldText not found", 11, true),
  result("ok", "read", "fine", 12),
  assistant([text("done")], 13),
  user("more", 14),
  assistant([call("e2", "edit", { path: "c" })], 15),
  result("e2", "edit", "failed", 16, true),
]);

describe("errorPurge", () => {
  test("nothing purged: same reference", () => {
    expect(errorPurge(msgs, { state: stateWith({}), config })).toBe(msgs);
    expect(errorPurge(msgs, { state: stateWith({ purged: ["nope@1#0"] }), config })).toBe(msgs);
  });

  test("replaces only the purged call's arguments, keeping id, name and the other blocks", () => {
    const out = errorPurge(msgs, { state: stateWith({ purged: ["e1@10#0"] }), config });
    const a = out[1] as AssistantMessage;
    const before = msgs[1] as AssistantMessage;
    expect(a.content[0]).toBe(before.content[0]);
    expect(a.content[1]).toEqual({
      type: "toolCall",
      id: "e1",
      name: "edit",
      arguments: { _purged: "arguments of a failed call removed by context-keeper; recall ref=e1@10#0" },
    });
    expect(a.content[2]).toBe(before.content[2]);
    expect(errorPurge(out, { state: stateWith({ purged: ["e1@10#0"] }), config })).toBe(out);
  });

  test("never touches the current tool loop", () => {
    expect(errorPurge(msgs, { state: stateWith({ purged: ["e2@15#0"] }), config })).toBe(msgs);
  });
});
