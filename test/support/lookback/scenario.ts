/**
 * The looking-back scenario: a scripted session over the lookback sandbox (project.ts) whose later
 * prompts need exact facts from earlier prompts' tool outputs.
 *
 * From a seed: N prompts (default 7), each on a theme (tests, review, logs, config, build) with
 * a tool loop of `stepsPerPrompt` steps (thinking, one call or a few in parallel, some failing)
 * and a final answer. The prompts and calls depend on the seed only; the needs also depend on the
 * density: none, some (1–3 per prompt after the first) or many (3–6). A need names a fact (a
 * definition, a code line, a failing test, an error line, a config value) of one earlier call's
 * output and the step of its prompt where the model uses it; that step quotes it. The fake
 * model (bench/wire/lookback-model.ts) checks at that step whether the request holds the fact
 * and recovers it when not.
 */
import type { MainStep } from "../fake-anthropic/types.ts";
import { createPrng, type Prng } from "../scenario-prng.ts";
import type { SandboxFiles } from "../scenario-sandbox.ts";
import { sentence, thinkingText } from "../scenario.ts";
import { CallMaker, type CallSpec, THEMES, type Theme } from "./calls.ts";
import { FACT_KINDS, type Fact, type FactKind } from "./facts.ts";
import { generateProject } from "./project.ts";

export type NeedDensity = "none" | "some" | "many";
export const NEED_DENSITIES: readonly NeedDensity[] = ["none", "some", "many"];

/** Needs per prompt after the first, inclusive. */
export const NEEDS_PER_PROMPT: Record<NeedDensity, [number, number]> = { none: [0, 0], some: [1, 3], many: [3, 6] };

/** How often each kind of fact is needed (relative weights). */
export const NEED_KIND_WEIGHTS: Record<FactKind, number> = { definition: 25, code: 25, "test-failure": 20, error: 15, config: 15 };

export interface Need {
  /** `n<prompt>.<k>`, unique in the scenario. */
  id: string;
  fact: Fact;
  /** The earlier call whose output holds the fact. */
  origin: CallSpec;
  originPrompt: number;
  /** Prompt (0-based) and step of its tool loop where the fact is used. */
  prompt: number;
  step: number;
}

export interface PlannedStep extends MainStep {
  /** Needs this step uses: the fake model makes sure the request holds them first. */
  needs: Need[];
}

export interface LookbackScenario {
  seed: number;
  density: NeedDensity;
  prompts: string[];
  /** Per prompt: tool steps, then the final answer. */
  stepsByPrompt: PlannedStep[][];
  files: SandboxFiles;
  needs: Need[];
  calls: CallSpec[];
}

export interface LookbackOptions {
  seed: number;
  density: NeedDensity;
  prompts?: number;
  stepsPerPrompt?: [number, number];
  thinkingChars?: [number, number];
  parallelRate?: number;
}

const THEME_PROMPTS: Record<Theme, (focus: string) => string> = {
  tests: (f) => `the ${f} tests fail: find out which tests fail and why`,
  review: (f) => `review how the ${f} module computes its limits and report what you find`,
  logs: (f) => `the service logs errors under load: trace the ${f} errors to the code`,
  config: (f) => `check the configured values for ${f} against what the code assumes`,
  build: (f) => `the build reports type and lint errors: list the ones in ${f} and what causes them`,
};

const LOOK_BACK = ["Now fix what you found earlier.", "Build on what the earlier tasks found.", "Use what you already saw where it applies."];

function weightedKind(prng: Prng, available: ReadonlySet<FactKind>): FactKind | undefined {
  const kinds = FACT_KINDS.filter((k) => available.has(k));
  const total = kinds.reduce((n, k) => n + NEED_KIND_WEIGHTS[k], 0);
  let r = prng.next() * total;
  for (const k of kinds) {
    r -= NEED_KIND_WEIGHTS[k];
    if (r <= 0) return k;
  }
  return kinds[kinds.length - 1];
}

function pickNeeds(prng: Prng, density: NeedDensity, callsByPrompt: CallSpec[][], toolSteps: number[]): Need[][] {
  const [min, max] = NEEDS_PER_PROMPT[density];
  return callsByPrompt.map((_, p) => {
    if (p === 0 || max === 0) return [];
    const earlier = callsByPrompt.slice(0, p).flatMap((cs, q) => cs.filter((c) => !c.fails || c.facts.length > 0).map((c) => ({ c, q })));
    const out: Need[] = [];
    for (let k = 0, want = prng.int(min, max); k < want; k++) {
      const kinds = new Set(earlier.flatMap(({ c }) => c.facts.map((f) => f.kind)));
      const kind = weightedKind(prng, kinds);
      if (!kind) break;
      const holders = earlier.filter(({ c }) => c.facts.some((f) => f.kind === kind && !out.some((n) => n.fact.text === f.text)));
      if (holders.length === 0) continue;
      const { c, q } = prng.pick(holders);
      const fact = prng.pick(c.facts.filter((f) => f.kind === kind && !out.some((n) => n.fact.text === f.text)));
      out.push({ id: `n${p}.${k}`, fact, origin: c, originPrompt: q, prompt: p, step: prng.int(0, toolSteps[p]! - 1) });
    }
    return out;
  });
}

export function generateLookbackScenario(o: LookbackOptions): LookbackScenario {
  const prng = createPrng(o.seed);
  const project = generateProject({ prng });
  const maker = new CallMaker(prng, project, `toolu_lb${o.seed}_`);
  const [minSteps, maxSteps] = o.stepsPerPrompt ?? [10, 15];
  const thinking = o.thinkingChars ?? [200, 1200];
  const promptCount = o.prompts ?? 7;
  const parallelRate = o.parallelRate ?? 0.25;

  const prompts: string[] = [];
  const callsByPrompt: CallSpec[][] = [];
  const stepsByPrompt: PlannedStep[][] = [];
  const toolSteps: number[] = [];
  for (let p = 0; p < promptCount; p++) {
    const theme = p < THEMES.length ? THEMES[p]! : prng.pick(THEMES);
    const focus = prng.pick(project.sources).name;
    prompts.push(`Task ${p + 1}: ${THEME_PROMPTS[theme](focus)}.${p > 0 ? ` ${prng.pick(LOOK_BACK)}` : ""}`);
    const steps: PlannedStep[] = [];
    const calls: CallSpec[] = [];
    const n = prng.int(minSteps, maxSteps);
    for (let s = 0; s < n; s++) {
      const width = prng.chance(parallelRate) ? prng.int(2, 3) : 1;
      const specs = Array.from({ length: width }, () => maker.next(theme));
      calls.push(...specs);
      const step: PlannedStep = { thinking: thinkingText(prng, thinking), toolCalls: specs.map((c) => c.call), needs: [] };
      if (prng.chance(0.3)) step.text = sentence(prng, "Checking the {w} next.");
      steps.push(step);
    }
    steps.push({ thinking: thinkingText(prng, thinking), text: `Findings for task ${p + 1}: the ${focus} ${theme} work is done after ${n} steps.`, needs: [] });
    toolSteps.push(n);
    callsByPrompt.push(calls);
    stepsByPrompt.push(steps);
  }

  // Needs come from their own stream, so every density shares the same prompts and calls.
  const needs = pickNeeds(createPrng(o.seed * 7919 + NEED_DENSITIES.indexOf(o.density) + 1), o.density, callsByPrompt, toolSteps);
  for (const [p, list] of needs.entries()) {
    for (const need of list) {
      const step = stepsByPrompt[p]![need.step]!;
      step.needs.push(need);
      step.text = `${step.text ? `${step.text} ` : ""}Using \`${need.fact.text}\` from task ${need.originPrompt + 1}.`;
    }
  }
  return { seed: o.seed, density: o.density, prompts, stepsByPrompt, files: project.files, needs: needs.flat(), calls: callsByPrompt.flat() };
}
