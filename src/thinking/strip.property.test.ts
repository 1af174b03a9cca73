import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { stripOldThinking, withoutThinking } from "./strip.ts";
import { boundaryForRender, computeThinkingBoundary } from "./boundary.ts";
import { protectedAssistantIndices } from "./current-loop.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { assistantsOf, redactedThinking } from "../../test/support/thinking/conversation.ts";

type Step = "prompt" | "answer" | "tool" | "plain" | "image" | "multi";

/** Turn a list of steps into a well-formed conversation with increasing timestamps. */
function build(steps: readonly Step[], start = 0): ContextMessage[] {
  const out: ContextMessage[] = [];
  let t = 1_000 + start * 100;
  let n = start;
  for (const step of steps) {
    n++;
    t += 10;
    switch (step) {
      case "prompt":
        out.push(user(`prompt ${n}`, t));
        break;
      case "answer":
        out.push(assistant([thinking(`think ${n}`), text(`answer ${n}`)], t));
        break;
      case "tool":
        out.push(assistant([thinking(`plan ${n}`), call(`c${n}`, "read", { n })], t));
        out.push(result(`c${n}`, "read", `out ${n}`, t + 1));
        break;
      case "plain":
        out.push(assistant([text(`no thinking ${n}`)], t));
        break;
      case "image":
        out.push({ role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: t } as ContextMessage);
        break;
      case "multi":
        out.push(assistant([thinking(`a ${n}`), redactedThinking(`r ${n}`), text(`t ${n}`), thinking(`b ${n}`), call(`m${n}`, "bash")], t));
        out.push(result(`m${n}`, "bash", `ok ${n}`, t + 1));
        break;
    }
  }
  return out;
}

const stepArb = fc.constantFrom<Step>("prompt", "answer", "tool", "plain", "image", "multi");
const conversationArb = fc.array(stepArb, { maxLength: 40 }).map((steps) => build(["prompt", ...steps]));
const keepArb = fc.integer({ min: 0, max: 12 });
const boundaryArb = (msgs: ContextMessage[]) =>
  fc.oneof(fc.constant(undefined), fc.integer({ min: 900, max: 1_000 + 10 * (msgs.length + 2) }));

const strippedIndices = (input: ContextMessage[], output: ContextMessage[]) =>
  input.flatMap((m, i) => (output[i] === m ? [] : [i]));

describe("stripOldThinking properties", () => {
  test("shape: same length and order; a changed slot is exactly the assistant minus its thinking", () => {
    fc.assert(
      fc.property(conversationArb.chain((msgs) => fc.tuple(fc.constant(msgs), keepArb, boundaryArb(msgs))), ([msgs, keep, boundary]) => {
        const before = JSON.stringify(msgs);
        const out = stripOldThinking(msgs, { enabled: true, keepLastTurns: keep }, boundary);
        expect(JSON.stringify(msgs)).toBe(before); // input not mutated
        expect(out).toHaveLength(msgs.length);
        for (const i of strippedIndices(msgs, out)) {
          const m = msgs[i] as AssistantMessage;
          expect(m.role).toBe("assistant");
          expect(out[i]).toEqual(withoutThinking(m));
        }
        if (strippedIndices(msgs, out).length === 0) expect(out).toBe(msgs);
      }),
    );
  });

  test("the current loop and the last assistant are never touched", () => {
    fc.assert(
      fc.property(conversationArb.chain((msgs) => fc.tuple(fc.constant(msgs), keepArb, boundaryArb(msgs))), ([msgs, keep, boundary]) => {
        const out = stripOldThinking(msgs, { enabled: true, keepLastTurns: keep }, boundary);
        for (const i of protectedAssistantIndices(msgs)) expect(out[i]).toBe(msgs[i]);
      }),
    );
  });

  test("idempotent: a second pass returns its input", () => {
    fc.assert(
      fc.property(conversationArb.chain((msgs) => fc.tuple(fc.constant(msgs), keepArb, boundaryArb(msgs))), ([msgs, keep, boundary]) => {
        const once = stripOldThinking(msgs, { enabled: true, keepLastTurns: keep }, boundary);
        expect(stripOldThinking(once, { enabled: true, keepLastTurns: keep }, boundary)).toBe(once);
      }),
    );
  });

  test("a later boundary strips a superset (thinking is never given back)", () => {
    fc.assert(
      fc.property(conversationArb, fc.integer({ min: 900, max: 1_500 }), fc.integer({ min: 0, max: 300 }), (msgs, b1, delta) => {
        const cfg = { enabled: true, keepLastTurns: 1 };
        const early = new Set(strippedIndices(msgs, stripOldThinking(msgs, cfg, b1)));
        const late = new Set(strippedIndices(msgs, stripOldThinking(msgs, cfg, b1 + delta)));
        for (const i of early) expect(late.has(i)).toBe(true);
      }),
    );
  });

  test("prefix stability: with a flush-computed boundary, each render of a growing loop extends the previous one", () => {
    const loopStep = fc.constantFrom<Step>("tool", "multi", "plain");
    fc.assert(
      fc.property(conversationArb, keepArb, fc.array(loopStep, { minLength: 1, maxLength: 12 }), (past, keep, loopSteps) => {
        // the flush at the end of `past` computes the boundary; then a new prompt and a tool loop
        const computed = computeThinkingBoundary(assistantsOf(past).map((m) => m.timestamp), keep);
        const boundary = boundaryForRender({ persisted: computed, hasFlushed: true });
        const tail = build(["prompt", ...loopSteps], 1_000);
        const cfg = { enabled: true, keepLastTurns: keep };
        let previous: string[] | undefined;
        for (let len = 1; len <= tail.length; len++) {
          const out = stripOldThinking([...past, ...tail.slice(0, len)], cfg, boundary).map((m) => JSON.stringify(m));
          if (previous) expect(out.slice(0, previous.length)).toEqual(previous);
          previous = out;
        }
      }),
    );
  });
});
