/**
 * The benchmark's arms: bare Pi, pi-condense (a benchmark arm only, loaded from a checkout when
 * one is there), this extension with its defaults, and this extension with one feature off.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";

export interface Arm {
  name: string;
  /** Load this repo as an extension (with `contextKeeper` settings). */
  keeper: boolean;
  contextKeeper?: Record<string, unknown>;
  /** Extra `-e` extension paths. */
  extensions?: string[];
  /** Merged into Pi's settings.json. */
  settings?: Record<string, unknown>;
  description: string;
}

const keeperOff = (name: string, description: string, contextKeeper: Record<string, unknown>): Arm => ({ name, keeper: true, contextKeeper, description });

export const KEEPER_ARMS: readonly Arm[] = [
  { name: "keeper", keeper: true, description: "this extension, defaults" },
  keeperOff("no-budget", "budget trigger off", { pruning: { budgetTrigger: { enabled: false } } }),
  keeperOff("no-loop-flush", "no flush inside a tool loop but the budget trigger's", { pruning: { loopFlush: { enabled: false } } }),
  keeperOff("no-compaction", "async compaction off", { compaction: { enabled: false } }),
  keeperOff("no-strip", "thinking strip off", { thinkingStrip: { mode: "off" } }),
  keeperOff("no-chains", "chain compression off", { pruning: { chainCompression: { enabled: false } } }),
  keeperOff("no-discipline", "cache discipline off", { cache: { discipline: false } }),
  keeperOff("extractive", "summaries never from a model", { summarizer: { mode: "extractive" } }),
  keeperOff("model", "summaries always from a model", { summarizer: { mode: "model" } }),
  keeperOff("auto", "a model summary when the horizon repays it", { summarizer: { mode: "auto" } }),
  keeperOff("chains-0", "chains collapse at the flush of their own final answer", { pruning: { chainCompression: { rollingWindow: 0 } } }),
  keeperOff("chains-1", "chains collapse one prompt later", { pruning: { chainCompression: { rollingWindow: 1 } } }),
  keeperOff("chains-3", "chains collapse three prompts later", { pruning: { chainCompression: { rollingWindow: 3 } } }),
  keeperOff("think-1", "thinking kept for the last turn only", { thinkingStrip: { keepLastTurns: 1 } }),
  keeperOff("think-16", "thinking kept for the last 16 turns", { thinkingStrip: { keepLastTurns: 16 } }),
  keeperOff("facts-0", "chains keep call lines only", { pruning: { chainCompression: { keptFactChars: 0 } } }),
  keeperOff("facts-150", "chains keep 150 characters of a failed call's facts (default 300)", { pruning: { chainCompression: { keptFactChars: 150 } } }),
  keeperOff("facts-800", "chains keep 800 characters of a failed call's facts (default 300)", { pruning: { chainCompression: { keptFactChars: 800 } } }),
  keeperOff("min-400", "batches of 400+ characters pruned (default 1200)", { pruning: { minBatchChars: 400 } }),
  keeperOff("aligned", "chains one prompt later, thinking of the last turn only", {
    pruning: { chainCompression: { rollingWindow: 1 } },
    thinkingStrip: { keepLastTurns: 1 },
  }),
];

export const BARE_ARM: Arm = { name: "bare", keeper: false, description: "Pi without extensions" };

/**
 * Where pi-condense is checked out: `--condense <dir>`, else `PI_CONDENSE_DIR`, else
 * `<repo root>/../shared/anchors/pi-condense`. Undefined when that folder has no `index.ts`.
 */
export function findCondense(repoRoot: string, explicit?: string): string | undefined {
  const dir = explicit ?? process.env.PI_CONDENSE_DIR ?? resolve(repoRoot, "../shared/anchors/pi-condense");
  return existsSync(resolve(dir, "index.ts")) ? resolve(dir) : undefined;
}

export function condenseArm(dir: string): Arm {
  return {
    name: "pi-condense",
    keeper: false,
    extensions: [dir],
    settings: { contextPrune: { enabled: true } },
    description: `pi-condense from ${dir}, {"contextPrune":{"enabled":true}}`,
  };
}

export const DEFAULT_ARM_NAMES = ["bare", "pi-condense", "keeper", "auto", "no-strip", "no-chains", "no-discipline"];

/** The arms named, in the order named; pi-condense is dropped (with a notice) when absent. */
export function selectArms(names: readonly string[], condenseDir: string | undefined, notice: (s: string) => void): Arm[] {
  const out: Arm[] = [];
  for (const name of names) {
    if (name === "bare") out.push(BARE_ARM);
    else if (name === "pi-condense") {
      if (condenseDir) out.push(condenseArm(condenseDir));
      else notice("pi-condense not found (set PI_CONDENSE_DIR or --condense <dir>): its arm is skipped");
    } else {
      const arm = KEEPER_ARMS.find((a) => a.name === name);
      if (!arm) throw new Error(`unknown arm "${name}" (known: bare, pi-condense, ${KEEPER_ARMS.map((a) => a.name).join(", ")})`);
      out.push(arm);
    }
  }
  return out;
}
