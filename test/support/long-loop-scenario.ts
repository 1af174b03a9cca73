/**
 * Generator of long tool loops for the wire benchmark's long-loop scenario (bench/wire/run.ts
 * `--scenario long-loop`): a few prompts, each a tool loop of 60–120 steps whose first steps read
 * large files (the exploration a coding agent starts a task with) and whose later steps are the
 * small outputs of an edit-and-check cycle (greps, line ranges, counts, small files, a failing
 * call now and then, a large file read again once in a while). Every step has thinking; a final
 * text-only answer ends each prompt.
 *
 * Same shape as `generateScenario` (scenario.ts): a flat script the fake servers answer in
 * order, the prompts, and the sandbox files Pi's real `read` / `bash` tools read.
 */
import type { MainStep, ScriptedToolCall } from "./fake-anthropic/types.ts";
import { sandboxStats, scenarioOf, sentence, thinkingText, type Scenario } from "./scenario.ts";
import { createPrng, type Prng } from "./scenario-prng.ts";
import { generateSandbox, SANDBOX_WORDS, type SandboxFiles } from "./scenario-sandbox.ts";

export type LongLoopOptions = {
  seed: number;
  /** User prompts (default 3). */
  prompts?: number;
  /** Tool-calling steps per prompt, inclusive (default [60, 120]); a final text step follows. */
  stepsPerPrompt?: [number, number];
  /** Steps at each loop's start that read large files (default [6, 10]). */
  earlySteps?: [number, number];
  /** Large files and their sizes in bytes (default 12, [16 KB, 40 KB]). */
  bigFiles?: number;
  bigBytes?: [number, number];
  /** Small files and their sizes in bytes (default 12, [1 KB, 6 KB]). */
  smallFiles?: number;
  smallBytes?: [number, number];
  /** Thinking per step, characters (default [150, 900]). */
  thinkingChars?: [number, number];
  /** Share of later calls that fail (default 0.1). */
  failureRate?: number;
  /** Share of later steps that read a large file again (default 0.03). */
  bigRereadRate?: number;
};

const prefixed = (files: SandboxFiles, prefix: string): SandboxFiles =>
  Object.fromEntries(Object.entries(files).filter(([p]) => p !== "README.md").map(([p, c]) => [p.replace(/^(\w+)\//, `$1/${prefix}`), c]));

function shuffled<T>(prng: Prng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function bigRead(prng: Prng, path: string): ScriptedToolCall {
  return prng.chance(0.7) ? { name: "read", input: { path } } : { name: "bash", input: { command: `cat ${path}` } };
}

function smallCall(prng: Prng, small: string[], big: string[]): ScriptedToolCall {
  const r = prng.next();
  const word = prng.pick(SANDBOX_WORDS);
  if (r < 0.3) return { name: "bash", input: { command: `grep -n ${word} ${prng.pick([...small, ...big])} | head -n ${prng.int(5, 40)}` } };
  if (r < 0.5) {
    const from = prng.int(1, 300);
    return { name: "bash", input: { command: `sed -n '${from},${from + prng.int(10, 60)}p' ${prng.pick(big)}` } };
  }
  if (r < 0.75) return { name: "read", input: { path: prng.pick(small) } };
  if (r < 0.9) return { name: "bash", input: { command: `head -c ${prng.int(400, 3000)} ${prng.pick(big)}` } };
  return { name: "bash", input: { command: `wc -l ${prng.pick(small)} ${prng.pick(big)}` } };
}

function failingCall(prng: Prng, n: number): ScriptedToolCall {
  return prng.chance(0.5)
    ? { name: "bash", input: { command: `echo "check ${n}: ${prng.pick(SANDBOX_WORDS)} mismatch" >&2; exit 1` } }
    : { name: "read", input: { path: `missing/${prng.pick(SANDBOX_WORDS)}-${n}.ts` } };
}

export function generateLongLoopScenario(options: LongLoopOptions): Scenario {
  const prng = createPrng(options.seed);
  const [minSteps, maxSteps] = options.stepsPerPrompt ?? [60, 120];
  const [minEarly, maxEarly] = options.earlySteps ?? [6, 10];
  const thinkingChars = options.thinkingChars ?? [150, 900];
  const failureRate = options.failureRate ?? 0.1;
  const rereadRate = options.bigRereadRate ?? 0.03;
  const [bigMin, bigMax] = options.bigBytes ?? [16_384, 40_960];
  const [smallMin, smallMax] = options.smallBytes ?? [1024, 6144];
  const bigFiles = prefixed(generateSandbox({ prng, count: options.bigFiles ?? 12, minBytes: bigMin, maxBytes: bigMax }), "big-");
  const smallFiles = prefixed(generateSandbox({ prng, count: options.smallFiles ?? 12, minBytes: smallMin, maxBytes: smallMax }), "small-");
  const files: SandboxFiles = { ...bigFiles, ...smallFiles, "README.md": "# Sandbox project\n\nGenerated files for the long-loop benchmark.\n" };
  const big = Object.keys(bigFiles);
  const small = Object.keys(smallFiles);
  const stats = sandboxStats(files);

  const prompts: string[] = [];
  const stepsByPrompt: MainStep[][] = [];
  let callNo = 0;
  for (let p = 0; p < (options.prompts ?? 3); p++) {
    const topic = `${prng.pick(SANDBOX_WORDS)} ${prng.pick(SANDBOX_WORDS)}`;
    prompts.push(`Task ${p + 1}: rework the ${topic} handling across this project, checking each change as you go.`);
    const steps: MainStep[] = [];
    const toolSteps = prng.int(minSteps, maxSteps);
    const early = prng.int(minEarly, maxEarly);
    // Each loop explores the large files in its own order.
    const order = shuffled(prng, big);
    let nextBig = 0;
    for (let s = 0; s < toolSteps; s++) {
      const toolCalls: ScriptedToolCall[] = [];
      if (s < early) {
        const width = prng.chance(0.3) ? 2 : 1;
        for (let k = 0; k < width; k++) toolCalls.push(bigRead(prng, order[nextBig++ % order.length]!));
      } else if (prng.chance(rereadRate)) {
        toolCalls.push(bigRead(prng, prng.pick(big)));
      } else {
        const width = prng.chance(0.2) ? 2 : 1;
        for (let k = 0; k < width; k++) {
          const fails = prng.chance(failureRate);
          toolCalls.push(fails ? failingCall(prng, callNo) : smallCall(prng, small, big));
          if (fails) stats.failingCalls++;
          callNo++;
        }
      }
      if (toolCalls.length > 1) stats.parallelSteps++;
      stats.toolCalls += toolCalls.length;
      const step: MainStep = { thinking: thinkingText(prng, thinkingChars), toolCalls };
      if (prng.chance(0.2)) step.text = sentence(prng, "Now the {w} part.");
      steps.push(step);
    }
    stats.toolSteps += toolSteps;
    steps.push({
      thinking: thinkingText(prng, thinkingChars),
      text: `Done with task ${p + 1}: the ${topic} handling is reworked in ${prng.pick(big)} and ${prng.pick(small)} after ${toolSteps} steps.`,
    });
    stepsByPrompt.push(steps);
  }
  return scenarioOf(options.seed, prompts, stepsByPrompt, files, stats);
}
