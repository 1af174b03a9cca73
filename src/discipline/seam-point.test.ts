import { describe, expect, test } from "bun:test";
import { firstExpectedChange, seamPointTimestamp } from "./seam-point.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";

// Two prompts: the first one's chain (ts 2–5) and answer (6), the second's loop (8–11) and answer (12).
const branch = [
  user("first", 1),
  assistant([call("a", "read", { path: "a.ts" })], 2),
  result("a", "read", "a", 3),
  assistant([call("b", "read", { path: "b.ts" })], 4),
  result("b", "read", "b", 5),
  assistant([text("first done")], 6),
  user("second", 7),
  assistant([thinking("look at c"), call("c", "read", { path: "c.ts" })], 8),
  result("c", "read", "c", 9),
  assistant([thinking("then d"), call("d", "read", { path: "d.ts" })], 10),
  result("d", "read", "d", 11),
  assistant([thinking("done"), text("second done")], 12),
];

describe("seamPointTimestamp", () => {
  test("no frozen boundary yet: no seam", () => {
    expect(seamPointTimestamp({ messages: branch, waitingAt: [], thinkingBoundaryTimestamp: undefined, thinkingStripOn: false, frozenThroughTimestamp: undefined })).toBeUndefined();
  });

  test("a chain due at the next flush: the seam goes through the prompt before it", () => {
    // The second prompt's chain starts at index 7 (ts 8): the seam covers the prompt (ts 7).
    const input = { messages: branch, waitingAt: [7], thinkingBoundaryTimestamp: undefined, thinkingStripOn: false, frozenThroughTimestamp: 3 };
    expect(firstExpectedChange(input)).toBe(7);
    expect(seamPointTimestamp(input)).toBe(7);
  });

  test("the earliest waiting change wins", () => {
    // Index 2 (the result at ts 3) comes before index 9: the seam covers the call at ts 2.
    expect(seamPointTimestamp({ messages: branch, waitingAt: [9, 2], thinkingBoundaryTimestamp: undefined, thinkingStripOn: false, frozenThroughTimestamp: 3 })).toBe(2);
  });

  test("the thinking strip: the first message still carrying thinking at or after the boundary changes next", () => {
    const on = { messages: branch, waitingAt: [], thinkingStripOn: true, frozenThroughTimestamp: 3 };
    // Boundary at 12 (keep the last turn): only the answer at 12 still has thinking to lose.
    expect(seamPointTimestamp({ ...on, thinkingBoundaryTimestamp: 12 })).toBe(11);
    // Boundary at 10: the assistant at 10 is the first one the next move strips.
    expect(seamPointTimestamp({ ...on, thinkingBoundaryTimestamp: 10 })).toBe(9);
    // Strip off: thinking never changes, nothing is expected: through the end of the branch.
    expect(seamPointTimestamp({ ...on, thinkingStripOn: false, thinkingBoundaryTimestamp: 10 })).toBe(12);
  });

  test("inside a running loop: the batches after the last answered one are stubbed next", () => {
    const inLoop = branch.slice(0, 11); // ends with the result of d (ts 11)
    expect(firstExpectedChange({ messages: inLoop, waitingAt: [], thinkingBoundaryTimestamp: undefined, thinkingStripOn: false })).toBe(9);
    expect(seamPointTimestamp({ messages: inLoop, waitingAt: [], thinkingBoundaryTimestamp: undefined, thinkingStripOn: false, frozenThroughTimestamp: 3 })).toBe(9);
  });

  test("a seam for the running loop's next flush: thinking inside that loop is not counted (the strip never touches it)", () => {
    const inLoop = branch.slice(0, 11);
    const on = { messages: inLoop, waitingAt: [9], thinkingStripOn: true, thinkingBoundaryTimestamp: 8, frozenThroughTimestamp: 3 };
    // Counted, the loop's first thinking (ts 8) pulls the seam back to the prompt.
    expect(seamPointTimestamp(on)).toBe(7);
    // Inside the loop the seam stays before where the next flush starts (d's step, index 9): through c's result.
    expect(seamPointTimestamp({ ...on, runningLoopStart: 7 })).toBe(9);
  });

  test("a change at the very first message: nothing before it, no seam", () => {
    expect(seamPointTimestamp({ messages: branch, waitingAt: [0], thinkingBoundaryTimestamp: undefined, thinkingStripOn: false, frozenThroughTimestamp: 3 })).toBeUndefined();
  });
});
