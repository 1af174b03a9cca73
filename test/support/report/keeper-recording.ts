/**
 * Recordings of real Pi sessions for the report's tests: one scripted scenario run through the
 * real pi CLI against the fake Anthropic server, once without the extension and once with it
 * (the same script, tool calls and files; two workspaces), each leaving its session file and
 * the usage the fake server billed, request by request, on the wire.
 *
 * `wireDollars` prices that wire usage independently of the report (Anthropic's usage fields
 * at per-million prices), so the report's "you paid" can be checked against what the server
 * actually billed, and its counterfactual against the other run's bill.
 */
import { readFileSync } from "node:fs";
import type { RecordedRequest, SideRouter } from "../fake-anthropic/types.ts";
import { createPiWorkspace, runPi, type FakeModelConfig, type RpcRecord, type RpcStep } from "../pi-runner.ts";
import type { Scenario } from "../scenario.ts";

export interface RecordedRun {
  /** The session file's text, read right after the run. */
  text: string;
  /** Main-loop requests (the session's own requests). */
  main: RecordedRequest[];
  /** Side requests (summarizer, compaction). */
  side: RecordedRequest[];
  failed: number;
  /** What `resumeWith` showed: the notifications of a second pi process on the same session (`pi -c`). */
  resumed?: { notifications: Array<{ message: string; notifyType: string }>; requests: number };
}

export interface Prices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** pi-runner's default fake model prices (Sonnet's list price), per million tokens. */
export const FAKE_MODEL_PRICES: Prices = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** Dollars the fake server billed for these requests, from its wire usage. */
export function wireDollars(requests: readonly RecordedRequest[], p: Prices = FAKE_MODEL_PRICES): number {
  let usd = 0;
  for (const r of requests) {
    const u = r.response?.usage;
    if (!u) continue;
    usd += (u.input_tokens * p.input + u.cache_read_input_tokens * p.cacheRead + u.cache_creation_input_tokens * p.cacheWrite + u.output_tokens * p.output) / 1e6;
  }
  return usd;
}

export interface RecordOptions {
  scenario: Scenario;
  /** The keeper's settings in the keeper run (default: none, the defaults). */
  contextKeeper?: Record<string, unknown>;
  model?: FakeModelConfig;
  sideRouter?: SideRouter;
  /** Environment of the keeper run (e.g. async compaction's start ratio). */
  env?: Record<string, string>;
  /** After the run, these prompts (commands such as `/keeper stats`) in a second pi process resuming the session. */
  resumeWith?: string[];
}

/** The async compaction status line as last set: "preparing" while a background summary runs. */
function compactionPreparing(all: readonly RpcRecord[]): boolean {
  for (let i = all.length - 1; i >= 0; i--) {
    const r = all[i]!;
    if (r.type === "extension_ui_request" && r.method === "setStatus" && String(r.statusKey).startsWith("async-compaction")) return String(r.statusText ?? "").includes("preparing");
  }
  return false;
}

/**
 * After the last prompt, until no background summary is being prepared (bounded): the session
 * then ends with every summary call ended, so what the server billed for each is what the
 * session's entries record (a call cut off at shutdown is recorded as far as its stream had
 * reported, while the fake server bills the whole answer it planned).
 */
const NO_SUMMARY_IN_FLIGHT: RpcStep = { waitFor: (_r, all) => !compactionPreparing(all), timeoutMs: 60_000 };

/** One run of the scenario, with (`keeper`) or without (`bare`) the extension. */
export async function recordRun(arm: "bare" | "keeper", o: RecordOptions): Promise<RecordedRun> {
  const workspace = createPiWorkspace(o.scenario.files);
  try {
    const run = await runPi({
      prompts: arm === "keeper" ? [...o.scenario.prompts, NO_SUMMARY_IN_FLIGHT] : o.scenario.prompts,
      script: o.scenario.steps,
      mode: "rpc",
      workspace,
      extension: arm === "keeper",
      model: o.model ?? { id: "claude-sonnet-4-5" },
      serverOptions: { idNonce: "same" },
      ...(arm === "keeper" && o.contextKeeper ? { contextKeeper: o.contextKeeper } : {}),
      ...(o.sideRouter ? { sideRouter: o.sideRouter } : {}),
      ...(arm === "keeper" && o.env ? { env: o.env } : {}),
    });
    if (!run.sessionFile) throw new Error(`${arm} run left no session file (exit ${run.exitCode}): ${run.stderr.slice(0, 500)}`);
    const text = readFileSync(run.sessionFile, "utf8");
    const resumed = o.resumeWith
      ? await runPi({
          prompts: o.resumeWith,
          mode: "rpc",
          resume: workspace,
          extension: arm === "keeper",
          model: o.model ?? { id: "claude-sonnet-4-5" },
          serverOptions: { idNonce: "same" },
          ...(arm === "keeper" && o.contextKeeper ? { contextKeeper: o.contextKeeper } : {}),
          ...(arm === "keeper" && o.env ? { env: o.env } : {}),
        })
      : undefined;
    return {
      text,
      main: run.mainRequests,
      side: run.sideRequests,
      failed: run.requests.filter((r) => r.status !== 200).length,
      ...(resumed ? { resumed: { notifications: resumed.notifications, requests: resumed.requests.length } } : {}),
    };
  } finally {
    workspace.cleanup();
  }
}
