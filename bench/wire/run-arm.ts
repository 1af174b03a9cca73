/** One arm of the wire benchmark on one scripted session: real pi against the fake server. */
import { runPi, type PiRunResult } from "../../test/support/pi-runner.ts";
import type { MainScript } from "../../test/support/fake-anthropic/types.ts";
import type { SandboxFiles } from "../../test/support/scenario-sandbox.ts";
import type { Arm } from "./arms.ts";
import { benchSideRouter } from "./side-router.ts";

export const BENCH_MODEL = "claude-sonnet-4-6";

export interface ArmSession {
  prompts: string[];
  script: MainScript;
  files: SandboxFiles;
}

/** Runs `session` under `arm` (`keeperDir`: another checkout of this extension in the keeper arms). */
export function runArmSession(arm: Arm, session: ArmSession, keeperDir?: string): Promise<PiRunResult> {
  return runPi({
    prompts: session.prompts,
    script: session.script,
    files: session.files,
    sideRouter: benchSideRouter,
    extension: arm.keeper && !keeperDir,
    ...(arm.contextKeeper ? { contextKeeper: arm.contextKeeper } : {}),
    ...(arm.settings ? { settings: arm.settings } : {}),
    args: [...(arm.keeper && keeperDir ? [keeperDir] : []), ...(arm.extensions ?? [])].flatMap((e) => ["-e", e]),
    // The fake server bills every thinking block it is sent, as Sonnet 4.6+ and Opus 4.5+ do.
    model: { id: BENCH_MODEL },
    thinking: "medium",
    timeoutMs: 300_000,
  });
}
