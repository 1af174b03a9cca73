import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { emptyState, type KeeperState } from "../state/schema.ts";
import { buildSession, sessionSpec } from "../../test/support/property/session-arbitrary.ts";
import { keyMask, maskedState, plannedState } from "../../test/support/property/state-arbitrary.ts";
import { keeperRender } from "./render.ts";
import { renderWithMemo, reuseBlocker, type RenderMemo } from "./render-memo.ts";

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

const counts = { requests: 0, reused: 0 };

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
  });
});
