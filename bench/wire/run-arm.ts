/**
 * One arm of the wire benchmark on one scripted session: real pi against a fake provider server
 * — Anthropic Messages (Sonnet 4.6, which bills old thinking, as the fake server does) or OpenAI
 * Responses (GPT-5.2, a GPT before 5.6: no write premium, reasoning items sent back) — and the
 * requests it recorded, read the same way for both (responses-record.ts) with the provider's
 * weights (weights.ts).
 */
import { runPi, type PiRunResult } from "../../test/support/pi-runner.ts";
import type { MainScript, RecordedRequest } from "../../test/support/fake-anthropic/types.ts";
import { PI_SUMMARIZATION_PROMPT_START } from "../../test/support/fake-anthropic/classify.ts";
import { defaultOpenAiSideAnswer, lastUserTextOfResponses, responsesInstructions, startFakeResponses, type FakeResponses } from "../../test/support/fake-openai/index.ts";
import type { MainStep } from "../../test/support/fake-anthropic/types.ts";
import type { SandboxFiles } from "../../test/support/scenario-sandbox.ts";
import type { Arm } from "./arms.ts";
import { fakeSummaryOf } from "./fake-summary.ts";
import { recordOfResponses } from "./responses-record.ts";
import { benchSideRouter } from "./side-router.ts";
import { ANTHROPIC_WEIGHTS, OPENAI_WEIGHTS, type BenchWeights } from "./weights.ts";

export const BENCH_MODEL = "claude-sonnet-4-6";
export const BENCH_OPENAI_MODEL = "gpt-5.2";

export type BenchProvider = "anthropic" | "openai";
export const BENCH_PROVIDERS: readonly BenchProvider[] = ["anthropic", "openai"];

export function parseProviders(text: string): BenchProvider[] {
  const out = text.split(",").map((s) => s.trim()).filter(Boolean);
  for (const p of out) if (!(BENCH_PROVIDERS as readonly string[]).includes(p)) throw new Error(`unknown provider "${p}" (known: ${BENCH_PROVIDERS.join(", ")})`);
  return out as BenchProvider[];
}

/** What every benchmark run of several seeds and arms takes (the looking-back and long-loop ones). */
export interface BenchRunOptions {
  seeds: number[];
  arms: Arm[];
  prompts: number;
  steps: [number, number];
  /** Another checkout of this extension for the keeper arms. */
  keeperDir?: string;
  json?: string;
  dump?: string;
}

export interface ArmSession {
  prompts: string[];
  script: MainScript;
  files: SandboxFiles;
}

/** Runs `session` under `arm` on the fake Anthropic server (`keeperDir`: another checkout of this extension in the keeper arms). */
export function runArmSession(arm: Arm, session: ArmSession, keeperDir?: string, contextWindow?: number): Promise<PiRunResult> {
  return runPi({
    prompts: session.prompts,
    script: session.script,
    files: session.files,
    sideRouter: benchSideRouter,
    ...armOptions(arm, keeperDir),
    // The fake server bills every thinking block it is sent, as Sonnet 4.6+ and Opus 4.5+ do.
    model: { id: BENCH_MODEL, ...(contextWindow ? { contextWindow } : {}) },
    thinking: "medium",
    timeoutMs: 600_000,
  });
}

function armOptions(arm: Arm, keeperDir: string | undefined) {
  return {
    extension: arm.keeper && !keeperDir,
    ...(arm.contextKeeper ? { contextKeeper: arm.contextKeeper } : {}),
    ...(arm.settings ? { settings: arm.settings } : {}),
    args: [...(arm.keeper && keeperDir ? [keeperDir] : []), ...(arm.extensions ?? [])].flatMap((e) => ["-e", e]),
  };
}

/** The fake Responses server's side answers in the benchmark: Pi's compaction summary, else a summary sized like a real model's. */
function responsesSideAnswer(ctx: { request: { body: Parameters<typeof responsesInstructions>[0] }; kindIndex: number }) {
  const instructions = responsesInstructions(ctx.request.body);
  if (instructions.includes(PI_SUMMARIZATION_PROMPT_START)) return defaultOpenAiSideAnswer(instructions, ctx.kindIndex);
  const input = lastUserTextOfResponses(ctx.request.body);
  const fuse = /\bfusing\b|\bfuse\b/i.test(instructions) || /\bfusing\b/i.test(input.slice(0, 400));
  return { text: fakeSummaryOf(input, { fuse }) };
}

export interface ProviderRun {
  run: PiRunResult<FakeResponses> | PiRunResult;
  /** Every request of the run, read as Anthropic's (responses-record.ts on OpenAI). */
  requests: RecordedRequest[];
  weights: BenchWeights;
  exhausted: number;
}

/** Runs `session` under `arm` on `provider`'s fake server. */
export async function runArmOn(provider: BenchProvider, arm: Arm, session: ArmSession, keeperDir?: string, contextWindow?: number): Promise<ProviderRun> {
  if (provider === "anthropic") {
    const run = await runArmSession(arm, session, keeperDir, contextWindow);
    return { run, requests: [...run.requests], weights: ANTHROPIC_WEIGHTS, exhausted: run.server.exhaustedCount() };
  }
  if (typeof session.script === "function") throw new Error("the OpenAI arm takes a list script");
  const server = startFakeResponses({ script: session.script as MainStep[], sideRouter: responsesSideAnswer });
  try {
    const run = await runPi<FakeResponses>({
      prompts: session.prompts,
      server,
      api: "openai-responses",
      files: session.files,
      ...armOptions(arm, keeperDir),
      model: { id: BENCH_OPENAI_MODEL, ...(contextWindow ? { contextWindow } : {}) },
      thinking: "medium",
      timeoutMs: 600_000,
    });
    return { run, requests: run.requests.map(recordOfResponses), weights: OPENAI_WEIGHTS, exhausted: server.exhaustedCount() };
  } finally {
    await server.stop();
  }
}
