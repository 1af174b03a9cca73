/**
 * Generator of realistic scripted sessions for the real-pi wire tests.
 *
 * From a seed it yields: a sandbox of files (written into Pi's cwd by the runner), N user prompts,
 * and the fake server's main-loop script. Each prompt gets a tool loop of `stepsPerPrompt` steps
 * (default 5–30) — every step has thinking, calls `read` / `bash` on sandbox files (outputs come
 * from real files sized `fileBytes`, default 2–40 KB), some calls fail (missing files, non-zero
 * exits), some steps call several tools at once — and then one final text-only answer.
 *
 * The script is flat: `steps` is `stepsByPrompt` concatenated; Pi asks once per step, so the
 * fake server's list cursor stays aligned with the prompts as long as nothing extra goes to the
 * main loop.
 */
import type { MainStep, ScriptedToolCall } from "./fake-anthropic/types.ts";
import { createPrng, type Prng } from "./scenario-prng.ts";
import { generateSandbox, SANDBOX_WORDS, type SandboxFiles } from "./scenario-sandbox.ts";

export type { SandboxFiles } from "./scenario-sandbox.ts";

export type ScenarioOptions = {
  seed: number;
  /** Number of user prompts (default 3). */
  prompts?: number;
  /** Tool-calling steps per prompt, inclusive range (default [5, 30]); a final text step follows. */
  stepsPerPrompt?: [number, number];
  /** Sandbox file count (default 12) and size range in bytes (default [2048, 40960]). */
  files?: number;
  fileBytes?: [number, number];
  /** Share of tool calls that fail (default 0.15). */
  failureRate?: number;
  /** Share of steps with parallel calls (default 0.25), and the most calls in one step (default 3). */
  parallelRate?: number;
  maxParallel?: number;
  /** Thinking length range in characters (default [80, 400]). */
  thinkingChars?: [number, number];
};

export type ScenarioStats = {
  mainRequests: number;
  toolSteps: number;
  toolCalls: number;
  failingCalls: number;
  parallelSteps: number;
  sandboxBytes: number;
};

export type Scenario = {
  seed: number;
  prompts: string[];
  /** The fake server's main script (all prompts, in order). */
  steps: MainStep[];
  stepsByPrompt: MainStep[][];
  files: SandboxFiles;
  stats: ScenarioStats;
};

const THOUGHTS = [
  "The output so far points at the {w} module.",
  "I should compare the {w} with what the {w} reports.",
  "That command failed, so the {w} path is probably wrong.",
  "Next I will look at the {w} file to confirm the {w} handling.",
  "The numbers in the {w} log look consistent with the {w} budget.",
  "Reading more of the {w} data should settle the question about the {w}.",
];

export function sentence(prng: Prng, template: string): string {
  return template.replace(/\{w\}/g, () => prng.pick(SANDBOX_WORDS));
}

export function thinkingText(prng: Prng, [min, max]: [number, number]): string {
  const target = prng.int(min, max);
  let out = "";
  while (out.length < target) out += (out ? " " : "") + sentence(prng, prng.pick(THOUGHTS));
  return out;
}

function okCall(prng: Prng, paths: string[]): ScriptedToolCall {
  const path = prng.pick(paths);
  const r = prng.next();
  if (r < 0.5) return { name: "read", input: { path } };
  if (r < 0.7) return { name: "bash", input: { command: `cat ${path}` } };
  if (r < 0.85) return { name: "bash", input: { command: `grep -n ${prng.pick(SANDBOX_WORDS)} ${path}` } };
  return { name: "bash", input: { command: `wc -l ${path} && head -c ${prng.int(2048, 8192)} ${path}` } };
}

function failingCall(prng: Prng, paths: string[], n: number): ScriptedToolCall {
  switch (prng.int(0, 4)) {
    case 0:
      return { name: "bash", input: { command: `cat missing/${prng.pick(SANDBOX_WORDS)}-${n}.txt` } };
    case 1:
      return { name: "bash", input: { command: `ls no-such-dir-${n}` } };
    case 2:
      return { name: "bash", input: { command: `grep -c zzqx-never-${n} ${prng.pick(paths)}` } };
    case 3:
      return { name: "bash", input: { command: `echo "check ${n} failed" >&2; exit 3` } };
    default:
      return { name: "read", input: { path: `missing/${prng.pick(SANDBOX_WORDS)}-${n}.ts` } };
  }
}

/** Stats of a scenario before its steps: the sandbox's size. */
export function sandboxStats(files: SandboxFiles): ScenarioStats {
  const stats: ScenarioStats = { mainRequests: 0, toolSteps: 0, toolCalls: 0, failingCalls: 0, parallelSteps: 0, sandboxBytes: 0 };
  for (const c of Object.values(files)) stats.sandboxBytes += c.length;
  return stats;
}

/** The scenario of per-prompt steps: the flat script, its request count. */
export function scenarioOf(seed: number, prompts: string[], stepsByPrompt: MainStep[][], files: SandboxFiles, stats: ScenarioStats): Scenario {
  const steps = stepsByPrompt.flat();
  return { seed, prompts, steps, stepsByPrompt, files, stats: { ...stats, mainRequests: steps.length } };
}

export function generateScenario(options: ScenarioOptions): Scenario {
  const prng = createPrng(options.seed);
  const [minSteps, maxSteps] = options.stepsPerPrompt ?? [5, 30];
  const [minBytes, maxBytes] = options.fileBytes ?? [2048, 40960];
  const thinkingChars = options.thinkingChars ?? [80, 400];
  const failureRate = options.failureRate ?? 0.15;
  const parallelRate = options.parallelRate ?? 0.25;
  const maxParallel = Math.max(2, options.maxParallel ?? 3);
  const files = generateSandbox({ prng, count: options.files ?? 12, minBytes, maxBytes });
  const paths = Object.keys(files).filter((p) => p !== "README.md");
  const stats = sandboxStats(files);

  const prompts: string[] = [];
  const stepsByPrompt: MainStep[][] = [];
  let callNo = 0;
  for (let p = 0; p < (options.prompts ?? 3); p++) {
    const topic = `${prng.pick(SANDBOX_WORDS)} ${prng.pick(SANDBOX_WORDS)}`;
    prompts.push(`Task ${p + 1}: investigate the ${topic} handling in this project and report what you find.`);
    const steps: MainStep[] = [];
    const toolSteps = prng.int(minSteps, maxSteps);
    for (let s = 0; s < toolSteps; s++) {
      const width = prng.chance(parallelRate) ? prng.int(2, maxParallel) : 1;
      const toolCalls: ScriptedToolCall[] = [];
      for (let k = 0; k < width; k++) {
        const fails = prng.chance(failureRate);
        toolCalls.push(fails ? failingCall(prng, paths, callNo) : okCall(prng, paths));
        callNo++;
        if (fails) stats.failingCalls++;
      }
      if (width > 1) stats.parallelSteps++;
      stats.toolCalls += width;
      const step: MainStep = { thinking: thinkingText(prng, thinkingChars), toolCalls };
      if (prng.chance(0.3)) step.text = sentence(prng, "Checking the {w} next.");
      steps.push(step);
    }
    stats.toolSteps += toolSteps;
    steps.push({
      thinking: thinkingText(prng, thinkingChars),
      text: `Findings for task ${p + 1}: the ${topic} handling lives in ${prng.pick(paths)}; ${toolSteps} steps of inspection done.`,
    });
    stepsByPrompt.push(steps);
  }
  return scenarioOf(options.seed, prompts, stepsByPrompt, files, stats);
}
