import { describe, expect, test } from "bun:test";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { chooseSeamIndex, minCacheableTokensFor, renderedIndexThrough, wireIndexOfRendered } from "./seam-target.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

// Rendered (Pi) messages and the wire pi-ai makes of them: two results merge into one user message.
const rendered: ContextMessage[] = [
  user("p1", 1),
  assistant([call("a", "read"), call("b", "read")], 2),
  result("a", "read", "A", 3),
  result("b", "read", "B", 4),
  assistant([text("done")], 5),
  user("p2", 6),
  assistant([call("a", "read")], 7), // the id comes back
  result("a", "read", "A2", 8),
];
const wire: WireRequestBody = {
  messages: [
    { role: "user", content: [{ type: "text", text: "p1" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "a", name: "read", input: {} }, { type: "tool_use", id: "b", name: "read", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "A" }, { type: "tool_result", tool_use_id: "b", content: "B" }] },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
    { role: "user", content: "p2" },
    { role: "assistant", content: [{ type: "tool_use", id: "a", name: "read", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "A2" }] },
  ],
};

describe("seam target", () => {
  test("the last rendered message at or before the frozen timestamp", () => {
    expect(renderedIndexThrough(rendered, 4)).toBe(3);
    expect(renderedIndexThrough(rendered, 4.5)).toBe(3);
    expect(renderedIndexThrough(rendered, 0)).toBe(-1);
    expect(renderedIndexThrough(rendered, 100)).toBe(7);
  });
  test("Pi's system messages are no position: the leading one, stamped a millisecond after the first prompt, does not stop the walk", () => {
    const lead = { role: "system", content: "You are pi.", timestamp: 1.5 } as unknown as ContextMessage;
    const patch = { role: "system", content: "", toolsAdded: [], timestamp: 99 } as unknown as ContextMessage;
    expect(renderedIndexThrough([lead, ...rendered.slice(0, 4), patch, ...rendered.slice(4)], 1)).toBe(1);
    expect(renderedIndexThrough([lead, ...rendered.slice(0, 4), patch, ...rendered.slice(4)], 4)).toBe(5); // the patch follows its predecessor
  });
  test("maps rendered messages to wire messages through ids and texts, n-th occurrence to n-th", () => {
    expect(wireIndexOfRendered(rendered, 3, wire)).toBe(2); // result b, merged
    expect(wireIndexOfRendered(rendered, 2, wire)).toBe(2); // result a, merged
    expect(wireIndexOfRendered(rendered, 1, wire)).toBe(1); // tool-use assistant
    expect(wireIndexOfRendered(rendered, 4, wire)).toBe(2); // a plain answer: the nearest identifiable message before it
    expect(wireIndexOfRendered(rendered, 5, wire)).toBe(4); // user text (string content on the wire)
    expect(wireIndexOfRendered(rendered, 7, wire)).toBe(6); // the second result of id "a"
    expect(wireIndexOfRendered(rendered, 6, wire)).toBe(5);
  });
  test("an unknown message maps to nothing", () => {
    expect(wireIndexOfRendered([user("elsewhere", 1)], 0, wire)).toBeUndefined();
  });
  test("the seam moves on a request that extends the previous one, stays on one that re-writes after it", () => {
    const prev = ["h0", "h1", "h2", "h3"];
    // extends: move to the new target
    expect(chooseSeamIndex({ target: 5, previousSeam: 1, previousPrefixes: prev, currentPrefixes: [...prev, "h4", "h5"] })).toBe(5);
    // changed at 3, after the previous seam 1: keep 1 (its entry is read)
    expect(chooseSeamIndex({ target: 5, previousSeam: 1, previousPrefixes: prev, currentPrefixes: ["h0", "h1", "h2", "X", "h4", "h5"] })).toBe(1);
    // changed at 1, at the previous seam: nothing to keep, take the target
    expect(chooseSeamIndex({ target: 5, previousSeam: 1, previousPrefixes: prev, currentPrefixes: ["h0", "X", "h2", "h3", "h4", "h5"] })).toBe(5);
    // no previous seam: the target
    expect(chooseSeamIndex({ target: 5, previousSeam: -1, previousPrefixes: prev, currentPrefixes: ["X"] })).toBe(5);
  });
  test("minimum cacheable prompt by model", () => {
    expect(minCacheableTokensFor("claude-sonnet-4-5")).toBe(1024);
    expect(minCacheableTokensFor("claude-opus-4-5")).toBe(4096);
    expect(minCacheableTokensFor("claude-haiku-4-5")).toBe(4096);
    expect(minCacheableTokensFor("claude-3-5-haiku-latest")).toBe(2048);
  });
});
