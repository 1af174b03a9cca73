/**
 * Pi's threshold compaction in an arm the recording does not show (pi-compaction.ts), on
 * generated sessions whose sizes are worked out by hand: the session's tool results are 40,000
 * characters (10,000 tokens by Pi's estimate), each call 6, the system message 7, a prompt 2;
 * the arm's own prompt tokens are Pi's estimate of what it sent plus 1,000 (`ARM_OVERHEAD`).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { DEFAULT_COMPACTION_SETTINGS, estimateTokens } from "@earendil-works/pi-coding-agent";
import type { SessionEntry } from "../compaction/primitives.ts";
import type { ContextMessage } from "../session/messages.ts";
import { compactionSession, type CompactionSession, type CompactionSessionOptions } from "../../test/support/report/compaction-session.ts";
import { generateSession, sessionPlanArb } from "../../test/support/report/session-generator.ts";
import { ARMS } from "./arms.ts";
import {
  initialPiCompactionSim,
  passesPiThreshold,
  PI_COMPACTION_DEFAULTS,
  piContextTokens,
  simulatedBranch,
  stepPiCompaction,
  userCompaction,
  type PiCompactionSim,
  type SimulatedCompaction,
} from "./pi-compaction.ts";
import { piReplayPrimitives } from "./pi-session-contexts.ts";
import { readRecording } from "./replay.ts";
import { reportSession } from "./session-report.ts";

const WINDOW = 100_000;
/** Pi's threshold with its default reserve: 100,000 − 16,384. */
const THRESHOLD = 83_616;
const ARM_OVERHEAD = 1_000;
const piTokens = (messages: readonly ContextMessage[]) => messages.reduce((n, m) => n + estimateTokens(m as never), 0);
const roles = (messages: readonly ContextMessage[]) => messages.map((m) => (m as { role: string }).role);

interface Simulated {
  contexts: ContextMessage[][];
  compactions: SimulatedCompaction[];
  /** Pi's measure before each request. */
  measures: number[];
  sim: PiCompactionSim;
}

/** Every request of `s` through the simulation, the arm sending its contexts unchanged (its prompt tokens: Pi's estimate + 1,000). */
function simulate(s: CompactionSession, keepRecorded: (c: SessionEntry) => boolean = () => false): Simulated {
  const recording = readRecording("generated.jsonl", s.text);
  let sim = initialPiCompactionSim(recording.points.entries as SessionEntry[], keepRecorded);
  const prompts = new Map<number, number>();
  const out: Simulated = { contexts: [], compactions: [], measures: [], sim };
  const armUsage = (answer: ContextMessage) => prompts.get((answer as { timestamp: number }).timestamp);
  recording.points.points.forEach((p, i) => {
    const leafId = s.requests[i]!.leafId;
    // Pi's measure before the request, over the context the arm had then (before a compaction made for it).
    const before = sim.compactions.length > 0 || sim.dropped > 0 ? (piReplayPrimitives.buildSessionProjection(simulatedBranch(sim, leafId)).messages as ContextMessage[]) : p.context;
    out.measures.push(piContextTokens(before, armUsage, piReplayPrimitives).tokens);
    const step = stepPiCompaction(sim, { requestIndex: i, leafId, recorded: p.context, at: p.assistant.timestamp, contextWindow: WINDOW, settings: PI_COMPACTION_DEFAULTS, armUsage }, piReplayPrimitives);
    sim = step.sim;
    if (step.compaction) out.compactions.push(step.compaction);
    out.contexts.push(step.context);
    prompts.set(p.assistant.timestamp, ARM_OVERHEAD + piTokens(step.context));
  });
  out.sim = sim;
  return out;
}

/** Pi's serialization of a summarized tool loop, written out: the prompt, then per round its call and its result cut to 2,000 characters. */
function serializedLoop(prompt: string, rounds: readonly number[], resultChars: number): string {
  const parts = [`[User]: ${prompt}`];
  for (const k of rounds) {
    parts.push(`[Assistant tool calls]: read(path="src/f${k}.ts")`);
    parts.push(`[Tool result]: ${`result ${k}: `.padEnd(2_000, "x")}\n\n[... ${resultChars - 2_000} more characters truncated]`);
  }
  return parts.join("\n\n");
}

describe("Pi's threshold compaction, simulated", () => {
  test("the defaults are Pi's", () => {
    expect(PI_COMPACTION_DEFAULTS).toEqual({ enabled: DEFAULT_COMPACTION_SETTINGS.enabled, reserveTokens: DEFAULT_COMPACTION_SETTINGS.reserveTokens, keepRecentTokens: DEFAULT_COMPACTION_SETTINGS.keepRecentTokens });
    expect(passesPiThreshold(THRESHOLD, WINDOW, PI_COMPACTION_DEFAULTS)).toBe(false);
    expect(passesPiThreshold(THRESHOLD + 1, WINDOW, PI_COMPACTION_DEFAULTS)).toBe(true);
    expect(passesPiThreshold(THRESHOLD + 1, WINDOW, { ...PI_COMPACTION_DEFAULTS, enabled: false })).toBe(false);
  });

  test("a tool loop that passes the threshold compacts once, before the request after the crossing, keeping what Pi's cut keeps; the summary request by hand", () => {
    const s = compactionSession({ rounds: [12], resultChars: 40_000 });
    const run = simulate(s);
    // Request k sends the system message (7), the prompt (2) and k rounds (6 + 10,000 each): the
    // arm's prompt tokens 1,009 + 10,006 k. Before request k Pi reads request k − 1's usage
    // (its prompt and 20 output tokens) plus the result that followed (10,000):
    // 1,009 + 10,006 (k − 1) + 20 + 10,000 = 1,023 + 10,006 k. Request 8: 81,071, below 83,616;
    // request 9: 91,077, above.
    expect(run.measures.slice(1, 10)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => 1_023 + 10_006 * k));
    expect(run.measures[8]).toBeLessThanOrEqual(THRESHOLD);
    expect(run.compactions).toHaveLength(1);
    const [c] = run.compactions;
    expect(c!.requestIndex).toBe(9);
    expect(c!.tokensBefore).toBe(91_077);
    // Pi's cut walks back 20,000 tokens from the last result: result 8 (10,000), call 8 (6),
    // result 7 (10,000) reach it; the cut is the next cut point, call 8. The turn is split: its
    // prefix (the prompt, rounds 0–7) is summarized, there is no history before it.
    expect((c!.entry as { firstKeptEntryId: string }).firstKeptEntryId).toBe(s.requests[8]!.answerId);
    expect(c!.entry.parentId).toBe(s.requests[9]!.leafId);
    expect(c!.summarized).toBe(1 + 2 * 8);
    // One summary request (a split turn's prefix, nothing before it): Pi's system prompt (310
    // characters), its headings (33) and instructions (665), the serialized prefix; 3.1
    // characters per token. The summary: 300 + 1% of the conversation's tokens.
    const conversation = serializedLoop("prompt 0", [0, 1, 2, 3, 4, 5, 6, 7], 40_000).length;
    expect(conversation).toBe(piReplayPrimitives.serializeConversation(readRecording("g", s.text).points.points[8]!.context.slice(1, 18)).length);
    const input = Math.ceil((310 + 33 + conversation + 665) / 3.1);
    const output = Math.min(2_000, Math.round(300 + 0.01 * Math.ceil(conversation / 3.1)));
    expect(c!.call).toMatchObject({ requests: 1, inputTokens: input, outputTokens: output });
    expect([input, output]).toEqual([5_760, 354]);
    // The summary's text weighs what the request returns (3.2 characters per token), then the files Pi lists.
    expect(c!.call.summary.length).toBe(Math.round(354 * 3.2) + "\n\nfiles read:\n".length + [0, 1, 2, 3, 4, 5, 6, 7].map((k) => `src/f${k}.ts`).join("\n").length);
    // The context of request 9: Pi's system message, the summary, the kept round 8; then it grows again.
    expect(roles(run.contexts[9]!)).toEqual(["system", "compactionSummary", "assistant", "toolResult"]);
    const recorded = readRecording("g", s.text).points.points;
    expect(run.contexts[9]!.slice(2)).toEqual(recorded[9]!.context.slice(-2));
    expect(roles(run.contexts[12]!)).toEqual(["system", "compactionSummary", ...Array(4).fill(["assistant", "toolResult"]).flat()]);
    // Before it nothing differed from the recording.
    run.contexts.slice(0, 9).forEach((ctx, i) => expect(ctx).toEqual(recorded[i]!.context));
  });

  test("a run that ends past the threshold: Pi compacts at its end (its last answer's usage alone), before the next prompt, which follows the summary", () => {
    // 8 rounds, then a closing answer of 36,000 characters (9,000 tokens, 9,000 output tokens).
    // Before its request (8) Pi reads 81,071 (as above): below. The run ends with that answer:
    // its request's 81,057 tokens and 9,000 output, 90,057, above the threshold. Request 9 is the
    // second prompt's; Pi measured at the end of the run, without the prompt.
    const s = compactionSession({ rounds: [8, 2], resultChars: 40_000, answerChars: 36_000, closingOutput: 9_000 });
    const run = simulate(s);
    expect(run.measures[8]).toBe(81_071);
    expect(run.measures[9]).toBe(81_057 + 9_000);
    expect(run.compactions.map((c) => c.requestIndex)).toEqual([9]);
    const [c] = run.compactions;
    expect(c!.tokensBefore).toBe(81_057 + 9_000);
    // The summary follows the closing answer; the prompt is not summarized, it comes after the summary.
    expect(c!.entry.parentId).toBe(s.requests[8]!.answerId);
    const ctx = run.contexts[9]!;
    expect(roles(ctx).slice(0, 2)).toEqual(["system", "compactionSummary"]);
    expect(ctx.at(-1)).toMatchObject({ role: "user", content: [{ type: "text", text: "prompt 1" }] });
    // Pi's cut from the closing answer: it (9,000), result 7 (10,000), call 7, result 6 reach 20,000: kept from call 7.
    expect((c!.entry as { firstKeptEntryId: string }).firstKeptEntryId).toBe(s.requests[7]!.answerId);
    expect(ctx.filter((m) => (m as { role: string }).role === "assistant")).toHaveLength(2);
  });

  test("a second compaction updates the first: the previous summary goes into the request, the summarized span starts at the first kept entry", () => {
    const s = compactionSession({ rounds: [24], resultChars: 40_000 });
    const run = simulate(s);
    expect(run.compactions.length).toBe(2);
    const [first, second] = run.compactions;
    // After the first (request 9) the arm sends 11,3xx tokens and grows 10,006 a round.
    expect(second!.requestIndex).toBeGreaterThan(first!.requestIndex + 5);
    expect(second!.tokensBefore).toBeGreaterThan(THRESHOLD);
    // The second request reads the first summary and Pi's longer update instructions (1,255 characters instead of 880).
    const conversationOf = (c: SimulatedCompaction) => Math.round(c.call.inputTokens * 3.1);
    expect(conversationOf(second!)).toBeGreaterThan(first!.call.summary.length);
    const ctx = run.contexts[second!.requestIndex]!;
    expect(roles(ctx).slice(0, 2)).toEqual(["system", "compactionSummary"]);
    expect((ctx[1] as { summary: string }).summary).toBe(second!.call.summary);
    expect(ctx.filter((m) => (m as { role: string }).role === "compactionSummary")).toHaveLength(1);
  });

  test("the recording's compactions: the user's /compact is kept, Pi's threshold compaction and an extension's are dropped (the arm compacts on its own)", () => {
    const base: CompactionSessionOptions = { rounds: [6, 6], resultChars: 40_000 };
    const recordedAt = (o: CompactionSessionOptions) => compactionSession(o).entries.find((e) => e.type === "compaction")!;
    const manual = recordedAt({ ...base, compactAfter: { request: 6, tokensBefore: 60_000, firstKeptRequest: 5 } });
    const threshold = recordedAt({ ...base, compactAfter: { request: 6, tokensBefore: 90_000, firstKeptRequest: 5 } });
    const extension = recordedAt({ ...base, compactAfter: { request: 6, tokensBefore: 60_000, firstKeptRequest: 5, fromHook: true } });
    expect([manual, threshold, extension].map((e) => userCompaction(e, WINDOW, PI_COMPACTION_DEFAULTS))).toEqual([true, false, false]);

    // Dropped: the arm's branch holds every message again, the compaction's place an inert entry.
    const s = compactionSession({ ...base, compactAfter: { request: 6, tokensBefore: 90_000, firstKeptRequest: 5 } });
    const run = simulate(s);
    expect(run.sim.dropped).toBe(1);
    // Request 7 (the second prompt's first) comes right after the recorded compaction: every round is there.
    const after = run.contexts[7]!;
    expect(roles(after)).not.toContain("compactionSummary");
    expect(after.filter((m) => (m as { role: string }).role === "toolResult")).toHaveLength(6);
    expect(simulatedBranch(run.sim, s.requests[7]!.leafId).some((e) => e.type === "compaction")).toBe(false);
    // Its own context passes the threshold later (12 rounds of 10,006): its own compaction, not the recorded summary.
    expect(run.compactions.length).toBe(1);
    expect(run.contexts.at(-1)!.some((m) => (m as { summary?: string }).summary === "Recorded summary.")).toBe(false);
    // Kept: the recorded summary stands where the user asked for it.
    const kept = simulate(compactionSession({ ...base, compactAfter: { request: 6, tokensBefore: 60_000, firstKeptRequest: 5 } }), (c) => userCompaction(c, WINDOW, PI_COMPACTION_DEFAULTS));
    expect(kept.sim.dropped).toBe(0);
    expect(kept.contexts[7]!.find((m) => (m as { role: string }).role === "compactionSummary")).toMatchObject({ summary: "Recorded summary." });
  });
});

describe("the arm's branch, rebuilt", () => {
  // Sessions of every entry kind Pi writes (compactions kept or retain-none, /tree branches with
  // or without a summary, context edits, custom messages, model and thinking changes).
  test("with every recorded compaction kept and none simulated, Pi's projection of the rebuilt branch is the context Pi built, request by request", () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-compaction-branch-"));
    try {
      for (const plan of fc.sample(sessionPlanArb, { seed: 71, numRuns: 30 })) {
        const recording = readRecording("g.jsonl", generateSession(plan, dir).text);
        const sim = initialPiCompactionSim(recording.points.entries as SessionEntry[], () => true);
        const parentOf = new Map(recording.points.entries.map((e) => [e.id, e.parentId]));
        for (const p of recording.points.points) {
          expect(piReplayPrimitives.buildSessionProjection(simulatedBranch(sim, parentOf.get(p.entryId) ?? null)).messages).toEqual(p.context);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("in the report's arms", () => {
  const ARMS_RUN = ARMS.filter((a) => a.name === "bare" || a.name === "keeper");
  const report = (s: CompactionSession) => reportSession({ file: "g.jsonl", text: s.text, arms: ARMS_RUN, summaries: "size-model", contextWindow: () => WINDOW }).report;

  test("on a keeper recording bare Pi compacts at its own threshold, and pays its summary request (uncached input, the summary as output, at the model's prices)", () => {
    const r = report(compactionSession({ rounds: [6, 10], resultChars: 40_000, keeperEntry: true }));
    expect(r.recorded_with).toBe("keeper");
    const bare = r.arms.bare!;
    expect(bare.compactions).toBe(1);
    expect(r.arms.keeper!.compactions).toBe(0);
    // Sonnet 4.5: $3 and $15 per million; in units of uncached input: 1 and 5.
    expect(bare.compaction_cost).toBeGreaterThan(5_000);
    expect(bare.usd_compaction).toBeCloseTo(bare.compaction_cost * 3e-6, 12);
    expect(bare.usd_total).toBeCloseTo(bare.usd_input + bare.usd_summarizer + bare.usd_compaction + bare.output * 15e-6, 9);
    // The cache is cold after it: the request after the compaction writes its new prefix.
    expect(bare.peak_context_tokens).toBeLessThan(WINDOW);
  });

  test("on a recording of bare Pi the bare arm is what was paid: Pi's recorded compaction, charged the usage Pi recorded on it, in 'you paid' too; the keeper arm does not inherit it", () => {
    const s = compactionSession({ rounds: [6, 10], resultChars: 40_000, compactAfter: { request: 14, tokensBefore: 91_000, firstKeptRequest: 13, usage: { input: 20_000, output: 900 } } });
    const r = report(s);
    expect(r.recorded_with).toBe("bare");
    const charged = (20_000 * 3 + 900 * 15) / 1e6;
    expect(r.arms.bare!).toMatchObject({ compactions: 1 });
    expect(r.arms.bare!.usd_compaction).toBeCloseTo(charged, 12);
    const withoutIt = report(compactionSession({ rounds: [6, 10], resultChars: 40_000, compactAfter: { request: 14, tokensBefore: 91_000, firstKeptRequest: 13 } }));
    expect(r.money.paid_usd - withoutIt.money.paid_usd).toBeCloseTo(charged, 12);
    // The keeper arm's context stays below the threshold: no compaction, none inherited.
    expect(r.arms.keeper!.compactions).toBe(0);
    expect(r.arms.keeper!.peak_context_tokens).toBeLessThan(THRESHOLD);
    // The request after Pi's compaction read nothing because Pi compacted: not a cache loss the other arms replay.
    expect(r.external_invalidations).toBe(0);
  });
});
