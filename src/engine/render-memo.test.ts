import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { buildSession, sessionSpec } from "../../test/support/property/session-arbitrary.ts";
import { keyMask, maskedState, plannedState } from "../../test/support/property/state-arbitrary.ts";
import { keeperRender } from "./render.ts";
import { renderAhead, renderWithMemo, reuseBlocker, type RenderMemo } from "./render-memo.ts";

const strip = (mode: "auto" | "flush-gated" | "off", keepLastTurns = 1): KeeperSettings => ({
  ...DEFAULT_SETTINGS,
  thinkingStrip: { ...DEFAULT_SETTINGS.thinkingStrip, mode, keepLastTurns },
});
const SETTINGS: KeeperSettings[] = [strip("flush-gated"), strip("off"), strip("flush-gated", 2), strip("auto"), strip("auto", 3), { ...DEFAULT_SETTINGS, pruning: { ...DEFAULT_SETTINGS.pruning, enabled: false } }];
const MODELS = [
  { provider: "anthropic", id: "claude-sonnet-4-6", api: "anthropic-messages" }, // auto: strips (keeps-all)
  { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" }, // auto: no strip
  { provider: "openai", id: "gpt-5", api: "openai-responses" },
];

const STATES = ["empty", "planned", "masked", "masked-boundary"] as const;

/** What happens between two requests. */
const operation = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("append" as const), n: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("flush" as const), which: fc.constantFrom(...STATES) }) },
  // A flush, the host's render ahead of the next prompt, then the next prompt (plain text, a
  // compressed chain's text — the stub phase reads it —, an image-only turn — not a text turn)
  // and maybe more of the session: the request that may reuse the render ahead.
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("flush-ahead" as const),
      which: fc.constantFrom(...STATES),
      /** The request ended (the branch is cut back to its last assistant message): the render ahead uses the probe. */
      answered: fc.boolean(),
      prompt: fc.constantFrom("text" as const, "text" as const, "chain-text" as const, "no-text" as const, "none" as const),
      more: fc.integer({ min: 0, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tree-move" as const), back: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("replace" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("compact" as const), keepFrom: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("settings" as const), index: fc.nat({ max: SETTINGS.length - 1 }), copy: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("model" as const), index: fc.nat({ max: MODELS.length - 1 }) }) },
);

const scenario = fc.record({
  spec: sessionSpec,
  mask: keyMask,
  start: fc.nat(),
  first: fc.record({ state: fc.constantFrom(...STATES), settings: fc.nat({ max: SETTINGS.length - 1 }), model: fc.nat({ max: MODELS.length - 1 }) }),
  ops: fc.array(operation, { minLength: 1, maxLength: 30 }),
});

const counts = { requests: 0, reused: 0, promptReused: 0 };

describe("incremental render (render-memo.ts)", () => {
  test("is byte-identical to the full render at every request, and the same array exactly when the full render is", () => {
    fc.assert(
      fc.property(scenario, ({ spec, mask, start, first, ops }) => {
        const session = buildSession(spec);
        const universe = [...session.history, ...session.loop, ...session.tail];
        const middle = universe[Math.floor(universe.length / 2)]!.timestamp;
        const stateOf = (which: string): KeeperState =>
          which === "empty" ? emptyState() : which === "planned" ? plannedState(session).nextState : maskedState(universe, mask, which === "masked-boundary" ? middle : undefined);
        let history: ContextMessage[] = universe.slice(0, 1 + (start % universe.length));
        let next = history.length;
        let state = stateOf(first.state);
        let settings = SETTINGS[first.settings]!;
        let model = MODELS[first.model]!;
        let memo: RenderMemo | undefined;
        const request = () => {
          const messages = structuredClone(history); // fresh objects, as Pi hands them
          const input = { messages, state, settings, model };
          const reusable = reuseBlocker(memo, input) === undefined;
          if (reusable && memo?.probe !== undefined) counts.promptReused++;
          const out = renderWithMemo(input, memo);
          const full = keeperRender({ ...input, messages: structuredClone(history) });
          expect(JSON.stringify(out.rendered)).toBe(JSON.stringify(full));
          // The full render of the clone returns its input exactly when the incremental one returns `messages`.
          expect(out.rendered === messages).toBe(keeperRender(input) === messages);
          counts.requests++;
          if (reusable) counts.reused++;
          memo = out.memo;
        };
        request();
        for (const op of ops) {
          if (op.kind === "append") {
            history = [...history, ...universe.slice(next, next + op.n)];
            next = Math.min(universe.length, next + op.n);
          } else if (op.kind === "flush") state = stateOf(op.which);
          else if (op.kind === "flush-ahead") {
            state = stateOf(op.which);
            const answer = history.findLastIndex((m) => m.role === "assistant");
            if (op.answered && answer > 0) {
              history = history.slice(0, answer + 1);
              next = history.length;
            }
            memo = renderAhead({ messages: structuredClone(history), state, settings, model }, memo).memo;
            if (op.prompt !== "none") {
              const chain = state.frontier.compressedChains[0];
              const text = op.prompt === "chain-text" && chain ? chain.text : `prompt ${history.length}`;
              const content = op.prompt === "no-text" ? [{ type: "image", data: "", mimeType: "image/png" }] : [{ type: "text", text }];
              history = [...history, { role: "user", content, timestamp: history.at(-1)!.timestamp + 1 } as ContextMessage];
            }
            history = [...history, ...universe.slice(next, next + op.more)];
            next = Math.min(universe.length, next + op.more);
          }
          else if (op.kind === "tree-move") {
            history = history.slice(0, Math.max(1, history.length - op.back));
            next = history.length;
          } else if (op.kind === "replace") {
            const at = op.at % history.length;
            history = history.map((m, i) => (i === at ? ({ ...m, timestamp: m.timestamp + 1, content: [{ type: "text", text: "another branch" }] } as ContextMessage) : m));
          } else if (op.kind === "compact") {
            const from = op.keepFrom % history.length;
            history = [{ role: "compactionSummary", summary: "compacted", tokensBefore: 1, timestamp: 1 } as ContextMessage, ...history.slice(from)];
          } else if (op.kind === "settings") settings = op.copy ? { ...SETTINGS[op.index]! } : SETTINGS[op.index]!;
          else model = MODELS[op.index]!;
          request();
        }
      }),
      { numRuns: 300 },
    );
    // The property is about reuse: a fair share of the requests must take the incremental path (about 1 in 5 here: generated loops are short).
    expect(counts.reused).toBeGreaterThan(counts.requests / 10);
    // And the render ahead of a prompt must be reused by the prompt's request (its probe path) in a fair share.
    expect(counts.promptReused).toBeGreaterThan(counts.requests / 50);
  });
});

describe("one memo extended twice (an older engine state rendered again)", () => {
  test("each extension is the full render of its own request: the second does not see the first's tail", () => {
    const settings = DEFAULT_SETTINGS;
    const model = MODELS[1]!; // no thinking strip: a memo from the first render on
    const state = emptyState();
    const base: ContextMessage[] = [user("p1", 1), assistant([call("c1", "read", { path: "a.ts" })], 2), result("c1", "read", "one", 3)];
    const first = renderWithMemo({ messages: structuredClone(base), state, settings, model }, undefined).memo;
    const a = [...structuredClone(base), assistant([call("c2", "read", { path: "b.ts" })], 4)];
    const b = [...structuredClone(base), assistant([text("done")], 5)];
    const fromA = renderWithMemo({ messages: a, state, settings, model }, first);
    const fromB = renderWithMemo({ messages: b, state, settings, model }, first);
    expect(fromB.memo?.timestamps).toEqual([1, 2, 3, 5]);
    expect(fromA.memo?.timestamps).toEqual([1, 2, 3, 4]);
    expect(JSON.stringify(fromB.rendered)).toBe(JSON.stringify(keeperRender({ messages: structuredClone(b), state, settings, model })));
    // A request after A's: reused from A's memo, which B's extension did not disturb.
    const next = [...structuredClone(a), result("c2", "read", "two", 6)];
    expect(reuseBlocker(fromA.memo, { messages: next, state, settings, model })).toBeUndefined();
  });
});

describe("render ahead of the next prompt (renderAhead)", () => {
  const branch: ContextMessage[] = [user("p1", 1), assistant([call("c1", "read", { path: "a.ts" })], 2), result("c1", "read", "x".repeat(900), 3), assistant([text("done")], 4)];
  const chain = { chainKey: "chain:b", fromTimestamp: 2, toTimestamp: 3, firstCallKey: "k", messageCount: 2, memberKeys: ["k"], summaryRefs: ["b"], text: "[chain] read a.ts" };
  const state: KeeperState = { ...emptyState(), frontier: { ...emptyState().frontier, flushSeq: 1, compressedChains: [chain] } };
  const input = (messages: ContextMessage[]) => ({ messages, state, settings: DEFAULT_SETTINGS, model: MODELS[0] });
  const ahead = renderAhead(input(structuredClone(branch)), undefined);

  test("the next prompt's request takes the probe's slot: reused, and equal to the full render", () => {
    expect(ahead.memo?.probe).toBe(branch.length);
    const request = [...structuredClone(branch), user("p2", 5)];
    expect(reuseBlocker(ahead.memo, input(request))).toBeUndefined();
    expect(JSON.stringify(renderWithMemo(input(request), ahead.memo).rendered)).toBe(JSON.stringify(keeperRender(input(structuredClone(request)))));
  });

  test("a prompt that is not a text turn, or that shows a compressed chain's text, falls back", () => {
    const image = { role: "user", content: [{ type: "image", data: "", mimeType: "image/png" }], timestamp: 5 } as ContextMessage;
    expect(reuseBlocker(ahead.memo, input([...structuredClone(branch), image]))).toBe("the next prompt is not like the probe");
    expect(reuseBlocker(ahead.memo, input([...structuredClone(branch), user(chain.text, 5)]))).toBe("the next prompt is not like the probe");
  });

  test("a branch that does not end with an answer is rendered as it is (no probe)", () => {
    const open = branch.slice(0, 3);
    const out = renderAhead(input(structuredClone(open)), undefined);
    expect(out.memo?.probe).toBeUndefined();
    expect(JSON.stringify(out.rendered)).toBe(JSON.stringify(keeperRender(input(structuredClone(open)))));
  });
});
