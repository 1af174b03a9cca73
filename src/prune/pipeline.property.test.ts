import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { currentLoopStart, pairToolCalls } from "./occurrence.ts";
import { errorPurge } from "./error-purge.ts";
import { pairingSweep } from "./pairing-sweep.ts";
import { guardCurrentLoop, PRUNING_PHASES, renderContext } from "./pipeline.ts";
import { stubReplace } from "./stub-replace.ts";
import { stubIndexOf } from "./stub-text.ts";
import type { ContextMessage } from "../session/messages.ts";
import { restoreState } from "../state/entries.ts";
import { type KeeperState, emptyState } from "../state/schema.ts";
import { buildSession, deepFreeze, fakeThinkingStrip, propertyConfig, sessionSpec } from "../../test/support/property/session-arbitrary.ts";
import { keyMask, maskedState, plannedState } from "../../test/support/property/state-arbitrary.ts";

const RUNS = { numRuns: 150 };

function render(messages: ContextMessage[], state: KeeperState): ContextMessage[] {
  return renderContext({ messages, state, config: propertyConfig, phases: { thinkingStrip: fakeThinkingStrip } });
}

/** Every state a property runs against: empty, planned by a real flush, and arbitrary key subsets. */
const scenario = fc.record({ spec: sessionSpec, mask: keyMask, kind: fc.constantFrom("empty", "planned", "masked") }).map(({ spec, mask, kind }) => {
  const session = buildSession(spec);
  const input = deepFreeze([...session.history, ...session.loop]);
  const state =
    kind === "empty"
      ? emptyState()
      : kind === "planned"
        ? plannedState(session).nextState
        : maskedState(input, mask, input.length > 4 ? input[Math.floor(input.length / 2)].timestamp : undefined);
  return { session, input, state, kind };
});

describe("render pipeline properties", () => {
  test("never emits an orphan tool call or result", () => {
    fc.assert(
      fc.property(scenario, ({ input, state }) => {
        const p = pairToolCalls(render(input, state));
        expect(p.orphanResults).toEqual([]);
        expect(p.unansweredCalls).toEqual([]);
      }),
      RUNS,
    );
  });

  test("keeps Pi's system messages (prompt and tool patches): the very objects, in their order, the leading one first", () => {
    fc.assert(
      fc.property(scenario, ({ input, state }) => {
        const out = render(input, state);
        const system = (ms: readonly ContextMessage[]) => ms.filter((m) => (m as { role?: string }).role === "system");
        expect(system(out)).toEqual(system(input));
        system(out).forEach((m, i) => expect(m).toBe(system(input)[i]!));
        if ((input[0] as { role?: string } | undefined)?.role === "system") expect(out[0]).toBe(input[0]);
      }),
      RUNS,
    );
  });

  test("never alters the current tool loop's assistant messages; its results change only into their persisted stubs", () => {
    fc.assert(
      fc.property(scenario, ({ input, state, session }) => {
        const out = render(input, state);
        const loop = out.slice(currentLoopStart(out));
        expect(loop.length).toBe(session.loop.length);
        const { textByKey, pointers } = stubIndexOf(state);
        const keyByIndex = pairToolCalls(input).callKeyByResultIndex;
        loop.forEach((m, i) => {
          const index = input.length - session.loop.length + i;
          const original = input[index]!;
          if (m === original) return;
          // Only a tool result may differ, and only as the stub its key has in the state.
          expect(original.role).toBe("toolResult");
          const key = keyByIndex.get(index)!;
          const text = textByKey.get(key);
          expect(text).toBeDefined();
          // A stub pointing at a ref the request does not answer carries its summary itself.
          const allowed = [text!, pointers.get(key)?.standalone].filter((t) => t !== undefined);
          expect(allowed.map((t) => ({ ...original, content: [{ type: "text", text: t }] }))).toContainEqual(m as never);
        });
      }),
      RUNS,
    );
  });

  test("empty state returns the same array unless history holds orphans to sweep", () => {
    fc.assert(
      fc.property(scenario, ({ input }) => {
        const loopStart = currentLoopStart(input);
        const p = pairToolCalls(input);
        const clean = p.orphanResults.every((i) => i >= loopStart) && p.unansweredCalls.every((c) => c.assistantIndex >= loopStart);
        const out = render(input, emptyState());
        expect(out === input).toBe(clean);
      }),
      RUNS,
    );
  });

  test("is idempotent: render(render(x)) equals render(x)", () => {
    fc.assert(
      fc.property(scenario, ({ input, state }) => {
        const once = render(input, state);
        expect(render(once, state)).toEqual(once);
      }),
      RUNS,
    );
  });

  test("is prefix-stable between flushes: appending tool-loop messages keeps the rendered prefix bytes", () => {
    fc.assert(
      fc.property(scenario, ({ input, state, session }) => {
        const before = render(input, state);
        const after = render(deepFreeze([...input, ...session.tail]), state);
        expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
        after.slice(before.length).forEach((m, i) => expect(m).toBe(session.tail[i]));
      }),
      RUNS,
    );
  });

  test("flushes persist entries that restore to exactly their state", () => {
    fc.assert(
      fc.property(sessionSpec, (spec) => {
        const plan = plannedState(buildSession(spec));
        const restored = restoreState(plan.entries.map((e) => JSON.parse(JSON.stringify({ type: "custom", ...e }))));
        expect(restored.diagnostics).toEqual([]);
        expect(restored.state).toEqual(plan.nextState);
      }),
      RUNS,
    );
  });
  test("one pairing serves the structure-keeping phases: the render equals every phase pairing its own input", () => {
    /** A pairing as plain data (call objects compared by their fields, not identity). */
    const plain = (messages: ContextMessage[]) => {
      const p = pairToolCalls(messages);
      return { calls: p.calls.map(({ arguments: _args, ...c }) => c), keys: [...p.callKeyByResultIndex], orphans: p.orphanResults, unanswered: p.unansweredCalls.map((c) => c.key) };
    };
    fc.assert(
      fc.property(scenario, ({ input, state }) => {
        const ctx = { state, config: propertyConfig };
        // Each phase on its own (no pairing handed in), in the pipeline's order.
        let own = input;
        for (const phase of PRUNING_PHASES) own = phase(own, ctx);
        own = pairingSweep(guardCurrentLoop(own, fakeThinkingStrip(own, { boundaryTimestamp: state.frontier.thinkingStripBoundaryTimestamp })), ctx);
        expect(render(input, state)).toEqual(own);
        // The phases the pipeline shares a pairing across keep it.
        const stubbed = stubReplace(input, ctx);
        expect(plain(stubbed)).toEqual(plain(input));
        expect(plain(errorPurge(stubbed, ctx))).toEqual(plain(input));
      }),
      RUNS,
    );
  });
});
