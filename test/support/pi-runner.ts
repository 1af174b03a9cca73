/**
 * Runs the REAL pi CLI headless against a fake provider server: the fake Anthropic server by
 * default; `api` (or a `server` of that kind) picks OpenAI Responses, the Codex backend, Chat
 * Completions or Google Generative AI, whose models.json entry pi-provider.ts writes (as it does
 * a `compat` block).
 *
 * Recipe (verified with Pi 1.6.0):
 * - Workspace under os.tmpdir(): `agent/` (PI_CODING_AGENT_DIR) holding `models.json` — provider
 *   `fake-anthropic`, `api: "anthropic-messages"`, `baseUrl: http://127.0.0.1:PORT` (no /v1; pi-ai
 *   posts to `/v1/messages?beta=true`), a literal `apiKey` (required), one model with
 *   `reasoning: true`, configurable contextWindow and per-million costs — and `settings.json`
 *   (`cacheWarming: "off"`, `retry.enabled: false`, `defaultProjectTrust: "never"`, default
 *   provider/model, then `contextKeeper` and caller settings); `project/` (cwd, the sandbox
 *   files); `tmp/` (TMPDIR); `home/` (HOME).
 * - Env: PI_OFFLINE=1, PI_SKIP_VERSION_CHECK=1, PI_TELEMETRY=0; inherited PI_* / ANTHROPIC_* vars
 *   are dropped.
 * - Command: `<node ≥ 22.19> node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js
 *   --no-extensions --no-context-files --no-skills --no-prompt-templates [-e <repo root>]
 *   [--continue] [--thinking L] …args` then either `-p <prompt>` (one prompt) or `--mode rpc`.
 *   The node is the one `scripts/pi-runtime.mjs` finds (the `npm run setup:pi-node`
 *   Node 22, PI_KEEPER_NODE, or `node` on PATH); without one, bun runs pi and a notice is printed
 *   once per test process.
 * - RPC: JSONL on stdin/stdout. Each prompt is `{"id","type":"prompt","message"}`; the response
 *   carries `data.disposition`: "started" → wait for the `agent_settled` event (NOT agent_end);
 *   "handled" (an extension command such as /keeper) → wait `graceMs` for late notifications and
 *   for `agent_settled` if the command started a run. Extension `ctx.ui.notify` arrives as
 *   `{"type":"extension_ui_request","method":"notify","message","notifyType"}`; dialog requests
 *   are answered `cancelled` unless `onUiRequest` answers. At the end the runner asks `get_state`
 *   (for `sessionFile`), closes stdin (orderly shutdown) and kills the process after a grace.
 */
import { join, resolve } from "node:path";
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions } from "./fake-anthropic/server.ts";
import type { MainScript, RecordedRequest, RequestClassifier, SideRouter } from "./fake-anthropic/types.ts";
import type { FakeServer } from "./fake-core.ts";
import { startFakeGoogle } from "./fake-google/index.ts";
import { startFakeCodex, startFakeCompletions, startFakeResponses } from "./fake-openai/index.ts";
import { writeProviderEntry, type PiApi } from "./pi-provider.ts";
import type { SandboxFiles } from "./scenario-sandbox.ts";
import { findPiRuntime, type PiRuntime } from "../../scripts/pi-runtime.mjs";
import {
  childEnv,
  createPiWorkspace,
  latestSessionFile,
  readSessionEntries,
  writeAgentConfig,
  type FakeModelConfig,
  type PiWorkspace,
} from "./scenario-workspace.ts";

export { createPiWorkspace, latestSessionFile, readSessionEntries, FAKE_PROVIDER, type FakeModelConfig, type PiWorkspace } from "./scenario-workspace.ts";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
export const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");

let runtime: PiRuntime | undefined;
/** The program that runs pi (found once per process; a bun fallback is announced on stderr). */
export function piRuntime(): Exclude<PiRuntime, { kind: "none" }> {
  if (!runtime) {
    runtime = findPiRuntime({ root: REPO_ROOT });
    if (runtime.notice) console.error(`[pi-runner] ${runtime.notice}`);
  }
  if (runtime.kind === "none") throw new Error(`[pi-runner] cannot run pi: ${runtime.notice}`);
  return runtime;
}

export type RpcRecord = { type: string; [key: string]: unknown };

/** One step of an RPC run. A bare string is a prompt (slash commands included). */
export type RpcStep =
  | string
  | { prompt: string; graceMs?: number }
  | { command: Record<string, unknown> }
  | { waitMs: number }
  /** Waits until any record of this run (past ones included) matches. */
  | { waitFor: (record: RpcRecord, all: readonly RpcRecord[]) => boolean; timeoutMs?: number }
  /** Does something outside pi between two steps (e.g. edits a settings file while pi runs). */
  | { run: () => void | Promise<void> };

/** Any fake provider server (fake-core.ts): Anthropic Messages by default, OpenAI Responses, Codex, Chat Completions or Google. */
export type AnyFakeServer = FakeServer<unknown, unknown>;
/** The record type of a fake server's requests. */
export type RecordOf<S extends AnyFakeServer> = S["requests"][number];

export type RunPiOptions<S extends AnyFakeServer = FakeAnthropic> = {
  prompts: RpcStep[];
  /** Default: "print" for a single plain prompt, else "rpc". */
  mode?: "print" | "rpc";
  /** Load this repo as an extension with `-e <repo root>` (default true). */
  extension?: boolean;
  /** Leave out `--no-extensions`, so pi loads configured packages and built-ins (default false). */
  discoverExtensions?: boolean;
  /** Use this server (kept running); otherwise one is started from script/sideRouter/classify and stopped. */
  server?: S;
  /**
   * The API pi speaks (default: the server's; `anthropic-messages` for a server the runner starts).
   * For another API without a server the runner starts that API's fake with `script` (a list).
   */
  api?: PiApi;
  /** The model's `compat` block in models.json (e.g. `{ supportsMessageThreads: true }`). */
  compat?: Record<string, unknown>;
  script?: MainScript;
  sideRouter?: SideRouter;
  classify?: RequestClassifier;
  /** Further options for a server the runner starts (script/sideRouter/classify above win). */
  serverOptions?: FakeAnthropicOptions;
  model?: FakeModelConfig;
  contextKeeper?: Record<string, unknown>;
  /** Merged (shallowly) over the default settings. */
  settings?: Record<string, unknown>;
  /** Raw settings.json text; replaces all generated settings. */
  settingsText?: string;
  /** Sandbox files for a fresh workspace. */
  files?: SandboxFiles;
  env?: Record<string, string>;
  args?: string[];
  thinking?: "off" | "minimal" | "low" | "medium" | "high";
  /** Reuse this workspace (agent dir + cwd) and pass `--continue`. */
  resume?: PiWorkspace;
  /** Reuse this workspace without `--continue`. */
  workspace?: PiWorkspace;
  /** Keep a workspace this run created (call `result.workspace.cleanup()` later). */
  keepWorkspace?: boolean;
  timeoutMs?: number; // default 120000
  /** Answer a dialog `extension_ui_request`; default `{ cancelled: true }`. */
  onUiRequest?: (request: RpcRecord) => Record<string, unknown> | undefined;
  onRecord?: (record: RpcRecord) => void;
};

export type PromptOutcome<R = RecordedRequest> = { prompt: string; response?: RpcRecord; settled?: RpcRecord; requests: R[] };

export type PiRunResult<S extends AnyFakeServer = FakeAnthropic> = {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  /** Requests that arrived during this run, all / main / side, in arrival order. */
  requests: RecordOf<S>[];
  mainRequests: RecordOf<S>[];
  sideRequests: RecordOf<S>[];
  /** Every JSON line on stdout (rpc mode), and subsets. */
  records: RpcRecord[];
  events: RpcRecord[];
  responses: RpcRecord[];
  uiRequests: RpcRecord[];
  notifications: Array<{ message: string; notifyType: string }>;
  /** One entry per prompt step, with the requests that arrived while it ran. */
  prompts: PromptOutcome<RecordOf<S>>[];
  sessionFile?: string;
  /** The session file's JSONL entries, read before any cleanup. */
  sessionEntries: Array<Record<string, unknown>>;
  workspace: PiWorkspace;
  server: S;
};

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The server a run starts when none is given: the fake for `o.api` (Anthropic Messages by default). */
function startServerFor<S extends AnyFakeServer>(o: RunPiOptions<S>): S {
  if (o.api !== undefined && o.api !== "anthropic-messages") {
    if (typeof o.script === "function") throw new Error(`[pi-runner] a function script on ${o.api} needs a server of its own (pass \`server\`)`);
    const options = { script: o.script, idNonce: o.serverOptions?.idNonce };
    const start = { "openai-responses": startFakeResponses, "openai-codex-responses": startFakeCodex, "openai-completions": startFakeCompletions, "google-generative-ai": startFakeGoogle }[o.api];
    return start(options) as unknown as S;
  }
  return startFakeAnthropic({
    ...o.serverOptions,
    ...(o.script ? { script: o.script } : {}),
    ...(o.sideRouter ? { sideRouter: o.sideRouter } : {}),
    ...(o.classify ? { classify: o.classify } : {}),
  }) as unknown as S;
}

export async function runPi<S extends AnyFakeServer = FakeAnthropic>(o: RunPiOptions<S>): Promise<PiRunResult<S>> {
  const started = Date.now();
  const timeoutMs = o.timeoutMs ?? 120_000;
  const deadline = started + timeoutMs;
  const ownServer = !o.server;
  const server = o.server ?? startServerFor(o);
  const borrowed = o.resume ?? o.workspace;
  const ws = borrowed ?? createPiWorkspace(o.files);
  writeAgentConfig(ws, { ...o, baseUrl: server.baseUrl });
  const api = o.api ?? (server.api as PiApi);
  if (api !== "anthropic-messages" || o.compat) writeProviderEntry(ws, { api, baseUrl: server.baseUrl, model: o.model, compat: o.compat });
  const firstRequest = server.requests.length;
  const single = o.prompts.length === 1 && typeof o.prompts[0] === "string" && !o.prompts[0].startsWith("/");
  const mode = o.mode ?? (single ? "print" : "rpc");

  const cmd = [piRuntime().command, PI_CLI, ...(o.discoverExtensions ? [] : ["--no-extensions"]), "--no-context-files", "--no-skills", "--no-prompt-templates"];
  if (o.extension !== false) cmd.push("-e", REPO_ROOT);
  if (o.resume) cmd.push("--continue");
  if (o.thinking) cmd.push("--thinking", o.thinking);
  cmd.push(...(o.args ?? []));
  if (mode === "print") {
    const p = o.prompts[0];
    if (typeof p !== "string") throw new Error("print mode takes one string prompt");
    cmd.push("-p", p);
  } else cmd.push("--mode", "rpc");

  const proc = Bun.spawn(cmd, { cwd: ws.cwd, env: childEnv(ws, o.env), stdin: mode === "rpc" ? "pipe" : "ignore", stdout: "pipe", stderr: "pipe" });
  let timedOut = false;
  const killTimer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, timeoutMs);

  const records: RpcRecord[] = [];
  const waiters = new Set<() => void>();
  let exited = false;
  let stdout = "";
  const readStdout = (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      const text = decoder.decode(chunk, { stream: true });
      stdout += text;
      if (mode !== "rpc") continue;
      pending += text;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, "");
        pending = pending.slice(nl + 1);
        if (!line.trim()) continue;
        let rec: RpcRecord;
        try {
          rec = JSON.parse(line) as RpcRecord;
        } catch {
          continue;
        }
        records.push(rec);
        o.onRecord?.(rec);
        if (rec.type === "extension_ui_request" && DIALOGS.has(String(rec.method))) {
          send({ type: "extension_ui_response", id: rec.id, ...(o.onUiRequest?.(rec) ?? { cancelled: true }) });
        }
        for (const w of [...waiters]) w();
      }
    }
  })();
  const readStderr = new Response(proc.stderr as ReadableStream<Uint8Array>).text();
  void proc.exited.then(() => {
    exited = true;
    for (const w of [...waiters]) w();
  });

  function send(command: Record<string, unknown>): void {
    if (exited || mode !== "rpc") return;
    const stdin = proc.stdin as import("bun").FileSink;
    stdin.write(JSON.stringify(command) + "\n");
    stdin.flush();
  }

  /** First record at index ≥ from matching pred; undefined on exit or deadline. */
  function waitRecord(pred: (r: RpcRecord) => boolean, from: number, until = deadline): Promise<RpcRecord | undefined> {
    return new Promise((resolveWait) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const check = () => {
        for (let i = from; i < records.length; i++) {
          if (pred(records[i])) return finish(records[i]);
        }
        if (exited || timedOut) finish(undefined);
      };
      const finish = (r: RpcRecord | undefined) => {
        waiters.delete(check);
        if (timer) clearTimeout(timer);
        resolveWait(r);
      };
      timer = setTimeout(() => finish(undefined), Math.max(0, until - Date.now()));
      waiters.add(check);
      check();
    });
  }

  let idNo = 0;
  async function request(command: Record<string, unknown>): Promise<RpcRecord | undefined> {
    const id = `runner-${++idNo}`;
    const from = records.length;
    send({ ...command, id });
    return waitRecord((r) => r.type === "response" && r.id === id, from);
  }

  const outcomes: PromptOutcome<RecordOf<S>>[] = [];
  let sessionFile: string | undefined;
  if (mode === "rpc") {
    for (const step of o.prompts) {
      if (exited || timedOut) break;
      if (typeof step === "object" && "waitMs" in step) await sleep(step.waitMs);
      else if (typeof step === "object" && "run" in step) await step.run();
      else if (typeof step === "object" && "waitFor" in step) {
        await waitRecord((r) => step.waitFor(r, records), 0, Math.min(deadline, Date.now() + (step.timeoutMs ?? timeoutMs)));
      } else if (typeof step === "object" && "command" in step) await request(step.command);
      else {
        const prompt = typeof step === "string" ? step : step.prompt;
        const graceMs = typeof step === "string" ? 300 : (step.graceMs ?? 300);
        const reqFrom = server.requests.length;
        const from = records.length;
        const response = await request({ type: "prompt", message: prompt });
        const data = response?.data as { disposition?: string } | undefined;
        let settled: RpcRecord | undefined;
        if (response?.success === true && data?.disposition !== "handled") {
          settled = await waitRecord((r) => r.type === "agent_settled", from);
        } else if (response?.success === true) {
          await sleep(graceMs);
          const startedRun = records.slice(from).some((r) => r.type === "agent_start");
          if (startedRun) settled = await waitRecord((r) => r.type === "agent_settled", from);
        }
        outcomes.push({ prompt, response, settled, requests: server.requests.slice(reqFrom) });
      }
    }
    const state = await request({ type: "get_state" });
    sessionFile = (state?.data as { sessionFile?: string } | undefined)?.sessionFile;
    (proc.stdin as import("bun").FileSink).end();
    const graceDeadline = Math.min(deadline, Date.now() + 15_000);
    await Promise.race([proc.exited, sleep(Math.max(0, graceDeadline - Date.now()))]);
    if (!exited) proc.kill("SIGKILL");
  }
  const exitCode = await proc.exited;
  clearTimeout(killTimer);
  await readStdout;
  const stderr = await readStderr;
  if (mode === "print") outcomes.push({ prompt: o.prompts[0] as string, requests: server.requests.slice(firstRequest) });

  sessionFile = sessionFile ?? latestSessionFile(ws.agentDir);
  const sessionEntries = readSessionEntries(sessionFile);
  const requests = server.requests.slice(firstRequest);
  if (ownServer) await server.stop();
  if (!borrowed && !o.keepWorkspace) ws.cleanup();
  return {
    exitCode,
    timedOut,
    durationMs: Date.now() - started,
    stdout,
    stderr,
    requests,
    mainRequests: requests.filter((r) => r.kind === "main"),
    sideRequests: requests.filter((r) => r.kind === "side"),
    records,
    events: records.filter((r) => r.type !== "response" && r.type !== "extension_ui_request"),
    responses: records.filter((r) => r.type === "response"),
    uiRequests: records.filter((r) => r.type === "extension_ui_request"),
    notifications: records
      .filter((r) => r.type === "extension_ui_request" && r.method === "notify")
      .map((r) => ({ message: String(r.message ?? ""), notifyType: String(r.notifyType ?? "info") })),
    prompts: outcomes,
    sessionFile,
    sessionEntries,
    workspace: ws,
    server,
  };
}
