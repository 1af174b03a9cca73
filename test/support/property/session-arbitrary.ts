/**
 * Generated Pi sessions for property tests: parallel calls, reused provider ids, failed
 * calls, missing and stray results, aborted assistants, thinking blocks, and an optional
 * compaction summary (plus a kept split turn) at the start. The last cycle is the current
 * tool loop and is always well formed (every call answered).
 */
import fc from "fast-check";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../../../src/prune/config.ts";
import type { ContextMessage } from "../../../src/session/messages.ts";
import { assistant, call, result, text, thinking, user } from "../message-factory.ts";

export interface CallSpec {
  id: string;
  name: string;
  path: string;
  body: string;
  isError: boolean;
  missing: boolean;
}

export interface StepSpec {
  calls: CallSpec[];
  thinking: boolean;
  aborted: boolean;
  stray: boolean;
  reverseResults: boolean;
}

export interface CycleSpec {
  steps: StepSpec[];
  answered: boolean;
}

export interface SessionSpec {
  compacted: boolean;
  keptSplitTurn: StepSpec[];
  cycles: CycleSpec[];
  loop: StepSpec[];
  /** Extra loop steps appended later (the next renders of the same tool loop). */
  tail: StepSpec[];
  /**
   * Pi's system messages: the leading one (prompt and tools), and patches appended before a
   * model request (a tool or prompt section added mid-session) after these steps, counted over
   * the cycles' steps and then the loop's.
   */
  system: { leading: boolean; patchesAfterStep: number[] };
}

const rare = fc.integer({ min: 0, max: 9 }).map((n) => n === 0);

const callSpec = (wellFormed: boolean): fc.Arbitrary<CallSpec> =>
  fc.record({
    id: fc.constantFrom("bash_1", "bash_2", "read_1", "toolu_A", "toolu_B", "toolu_C"),
    name: fc.constantFrom("read", "bash", "edit", "keeper_recall"),
    path: fc.constantFrom("a.ts", "src/b.ts", "secrets/.env"),
    body: fc.constantFrom("ok", "short output", "x".repeat(1500), "y".repeat(700)),
    isError: rare,
    missing: wellFormed ? fc.constant(false) : rare,
  });

const stepSpec = (wellFormed: boolean): fc.Arbitrary<StepSpec> =>
  fc.record({
    calls: fc.array(callSpec(wellFormed), { minLength: 1, maxLength: 3 }),
    thinking: fc.boolean(),
    aborted: wellFormed ? fc.constant(false) : rare,
    stray: wellFormed ? fc.constant(false) : rare,
    reverseResults: fc.boolean(),
  });

export const sessionSpec: fc.Arbitrary<SessionSpec> = fc.record({
  compacted: fc.boolean(),
  keptSplitTurn: fc.array(stepSpec(true), { maxLength: 1 }),
  cycles: fc.array(fc.record({ steps: fc.array(stepSpec(false), { maxLength: 4 }), answered: fc.integer({ min: 0, max: 4 }).map((n) => n > 0) }), {
    minLength: 0,
    maxLength: 6,
  }),
  loop: fc.array(stepSpec(true), { maxLength: 3 }),
  tail: fc.array(stepSpec(true), { minLength: 1, maxLength: 2 }),
  system: fc.record({ leading: fc.boolean(), patchesAfterStep: fc.array(fc.nat(20), { maxLength: 2 }) }),
});

/** A session whose current loop runs long (4–14 well-formed steps, then 1–2 more): in-loop flushes have old steps to prune. */
export const longLoopSessionSpec: fc.Arbitrary<SessionSpec> = fc.record({
  compacted: fc.boolean(),
  keptSplitTurn: fc.array(stepSpec(true), { maxLength: 1 }),
  cycles: fc.array(fc.record({ steps: fc.array(stepSpec(false), { maxLength: 4 }), answered: fc.integer({ min: 0, max: 4 }).map((n) => n > 0) }), { maxLength: 3 }),
  loop: fc.array(stepSpec(true), { minLength: 4, maxLength: 14 }),
  tail: fc.array(stepSpec(true), { minLength: 1, maxLength: 2 }),
  system: fc.record({ leading: fc.boolean(), patchesAfterStep: fc.array(fc.nat(20), { maxLength: 2 }) }),
});

class Clock {
  t = 1_000;
  next(): number {
    return (this.t += 7);
  }
}

function stepMessages(step: StepSpec, clock: Clock): ContextMessage[] {
  const content: AssistantMessage["content"] = [];
  if (step.thinking) content.push(thinking(`thought ${clock.t}`));
  const args = (c: CallSpec) => (c.name === "bash" ? { command: `cat ${c.path}` } : { path: c.path });
  for (const c of step.calls) content.push(call(c.id, c.name, args(c)));
  const out: ContextMessage[] = [assistant(content, clock.next(), step.aborted ? { stopReason: "aborted" } : {})];
  const results = step.calls.filter((c) => !c.missing).map((c) => ({ c }));
  if (step.reverseResults) results.reverse();
  for (const { c } of results) out.push(result(c.id, c.name, c.body, clock.next(), c.isError));
  if (step.stray) out.push(result("stray_1", "read", "stray output", clock.next()));
  return out;
}

export interface BuiltSession {
  /** Everything up to and including the last user message. */
  history: ContextMessage[];
  /** The current tool loop after it. */
  loop: ContextMessage[];
  /** More loop messages, appended by a later render of the same loop. */
  tail: ContextMessage[];
}

export function buildSession(spec: SessionSpec): BuiltSession {
  const clock = new Clock();
  const history: ContextMessage[] = [];
  const system = spec.system ?? { leading: false, patchesAfterStep: [] };
  if (system.leading) history.push({ role: "system", content: "You are a coding agent.", toolsAdded: [{ name: "read", description: "read", parameters: {} }], timestamp: 0 } as ContextMessage);
  if (spec.compacted) {
    history.push({ role: "compactionSummary", summary: "earlier work", tokensBefore: 50_000, timestamp: clock.next() } as ContextMessage);
    for (const s of spec.keptSplitTurn) history.push(...stepMessages(s, clock));
  }
  let step = 0;
  /** A step's messages, then a system patch when one comes after it (Pi appends it before the next request). */
  const stepWithPatch = (s: StepSpec): ContextMessage[] => {
    const out = stepMessages(s, clock);
    if (system.patchesAfterStep.includes(step++))
      out.push({ role: "system", content: "", toolsAdded: [{ name: `late_${step}`, description: "late", parameters: {} }], timestamp: clock.next() } as ContextMessage);
    return out;
  };
  spec.cycles.forEach((cycle, i) => {
    history.push(user(`prompt ${i}`, clock.next()));
    for (const s of cycle.steps) history.push(...stepWithPatch(s));
    if (cycle.answered) history.push(assistant([thinking("wrap up"), text(`answer ${i}`)], clock.next()));
  });
  history.push(user("current prompt", clock.next()));
  const loop = spec.loop.flatMap(stepWithPatch);
  const tail = spec.tail.flatMap((s) => stepMessages(s, clock));
  return { history, loop, tail };
}

export const propertyConfig: PruneConfig = {
  ...DEFAULT_PRUNE_CONFIG,
  minBatchChars: 1000,
  protectedPaths: [".env"],
  errorPurge: { enabled: true, cooldownTurns: 1 },
  chainCompression: { enabled: true, rollingWindow: 1 },
};

/** Thinking-strip stand-in: drops thinking from assistants older than the boundary (all-or-nothing). */
export function fakeThinkingStrip(messages: ContextMessage[], { boundaryTimestamp: boundary }: { boundaryTimestamp: number | undefined }): ContextMessage[] {
  if (boundary === undefined) return messages;
  let changed = false;
  const out = messages.map((m) => {
    if (m.role !== "assistant" || m.timestamp >= boundary || !m.content.some((b) => b.type === "thinking")) return m;
    changed = true;
    return { ...m, content: m.content.filter((b) => b.type !== "thinking") };
  });
  return changed ? out : messages;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
