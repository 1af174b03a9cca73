/**
 * Every ref a render shows can be produced by `keeper_recall` (issue #14): with no recall
 * index at all (entries lost), from the very messages the render was given — also when the
 * request holds only the tail of the session (a compaction cut), so the stubs a ref points at
 * (a batch's summary carrier, an alias target) may be missing from it.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { renderContext } from "./pipeline.ts";
import type { ContextMessage } from "../session/messages.ts";
import { emptyRecallIndex } from "../recall/recall-index.ts";
import { executeRecall } from "../recall/tool.ts";
import { buildSession, deepFreeze, fakeThinkingStrip, propertyConfig, sessionSpec } from "../../test/support/property/session-arbitrary.ts";
import { keyMask, maskedState, plannedState } from "../../test/support/property/state-arbitrary.ts";

const REF = /ref=(\S+?#\d+)/g;

function refsShown(messages: readonly ContextMessage[]): Set<string> {
  const refs = new Set<string>();
  for (const m of messages) for (const match of JSON.stringify(m).matchAll(REF)) refs.add(match[1]!);
  return refs;
}

const scenario = fc
  .record({ spec: sessionSpec, mask: keyMask, planned: fc.boolean(), cut: fc.double({ min: 0, max: 0.9, noNaN: true }) })
  .map(({ spec, mask, planned, cut }) => {
    const session = buildSession(spec);
    const all = [...session.history, ...session.loop];
    const state = planned ? plannedState(session).nextState : maskedState(all, mask, all.length > 4 ? all[Math.floor(all.length / 2)]!.timestamp : undefined);
    // The request: the whole session, or its tail from some message on (state left as it was).
    const from = Math.min(Math.floor(cut * session.history.length), Math.max(0, session.history.length - 1));
    return { input: deepFreeze(all.slice(from)), state };
  });

describe("refs a render shows", () => {
  test("each one is recalled from the rendered request alone, with an empty recall index", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ input, state }) => {
        const out = renderContext({ messages: input, state, config: propertyConfig, phases: { thinkingStrip: fakeThinkingStrip } });
        for (const ref of refsShown(out)) {
          const r = await executeRecall({ params: { ref }, store: emptyRecallIndex(), branchMessages: input });
          if (r.isError) throw new Error(`ref ${ref} shown but not recallable: ${r.text}`);
        }
      }),
      { numRuns: 200 },
    );
  });
});
