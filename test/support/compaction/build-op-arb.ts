/** fast-check arbitrary of session-building operations (`SessionBuilder`), shared by the compaction property tests. */
import fc from "fast-check";
import type { BuildOp } from "./session-builder.ts";

export const opArb: fc.Arbitrary<BuildOp> = fc.oneof(
  fc.record({ op: fc.constant("user" as const), chars: fc.integer({ min: 1, max: 3000 }) }),
  fc.record({
    op: fc.constant("tool_loop" as const),
    tool: fc.constantFrom("read" as const, "write" as const, "edit" as const, "bash" as const),
    path: fc.constantFrom("a.ts", "b.ts", "c/d.ts"),
    resultChars: fc.integer({ min: 0, max: 8000 }),
    usage: fc.option(fc.integer({ min: 200, max: 90_000 }), { nil: undefined }),
  }),
  fc.record({ op: fc.constant("reply" as const), chars: fc.integer({ min: 1, max: 3000 }), usage: fc.option(fc.integer({ min: 200, max: 90_000 }), { nil: undefined }), withThinking: fc.boolean() }),
  fc.record({ op: fc.constant("bash_execution" as const), chars: fc.integer({ min: 0, max: 4000 }) }),
  fc.constant({ op: "custom_entry" as const }),
  fc.record({ op: fc.constant("custom_message" as const), chars: fc.integer({ min: 1, max: 1000 }) }),
  fc.record({
    op: fc.constant("compaction" as const),
    fromHook: fc.boolean(),
    keepLast: fc.integer({ min: 0, max: 6 }),
    files: fc.option(fc.record({ read: fc.constant<string[]>(["p/r.ts"]), modified: fc.constant<string[]>(["p/m.ts"]) }), { nil: undefined }),
  }),
  fc.constant({ op: "omit_last_assistant" as const }),
  fc.record({ op: fc.constant("replace_last_tool_result" as const), chars: fc.integer({ min: 0, max: 500 }) }),
  fc.constant({ op: "aborted_reply" as const }),
);
