/**
 * Rendered slots per raw message: a render keeps timestamps (a collapsed chain carries its first
 * message's), so rendered messages are lined up with raw ones by timestamp — one to one where the
 * raw branch and the render hold as many messages of a timestamp (parallel tool results written in
 * the same millisecond), else all of them on the first raw message of that timestamp.
 */
import { describe, expect, test } from "bun:test";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { slotsByRawIndex, slotsDiffer } from "./history-view.ts";

const stub = (m: ContextMessage): ContextMessage => ({ ...(m as object), content: [{ type: "text", text: "stub" }] }) as ContextMessage;

describe("slotsByRawIndex", () => {
  test("parallel results of one millisecond: each keeps its own slot, so a stub of the second is seen", () => {
    const a = assistant([call("x", "read", { path: "x.ts" }), call("y", "read", { path: "y.ts" })], 2);
    const rx = result("x", "read", "x".repeat(4000), 3);
    const ry = result("y", "read", "y".repeat(4000), 3);
    const raw = [user("go", 1), a, rx, ry];
    const before = slotsByRawIndex(raw, raw);
    const after = slotsByRawIndex(raw, [raw[0]!, a, rx, stub(ry)]);
    expect(before[3]!.messages).toEqual([ry]);
    expect(slotsDiffer(before[2]!, after[2]!)).toBe(false);
    expect(slotsDiffer(before[3]!, after[3]!)).toBe(true);
    expect(after[3]!.tokens).toBeLessThan(before[3]!.tokens);
  });

  test("a collapsed chain: its one message counts for the chain's first raw message, the others for nothing", () => {
    const raw = [user("go", 1), assistant([call("x", "read", { path: "x.ts" })], 2), result("x", "read", "x".repeat(4000), 3), assistant([text("done")], 4)];
    const chain = user("read x.ts", 2);
    const slots = slotsByRawIndex(raw, [raw[0]!, chain, raw[3]!]);
    expect(slots[1]!.messages).toEqual([chain]);
    expect(slots[2]!.messages).toEqual([]);
    expect(slots[3]!.messages).toEqual([raw[3]]);
  });
});
