/**
 * The on-disk workspace a scenario runs in: an isolated Pi agent dir (models.json pointing at
 * the fake server, settings.json), the project cwd holding the sandbox files, TMPDIR and HOME;
 * plus the child environment and session-file lookup. Used by pi-runner.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeSandbox, type SandboxFiles } from "./scenario-sandbox.ts";

export const FAKE_PROVIDER = "fake-anthropic";

export type PiWorkspace = { root: string; agentDir: string; cwd: string; tmpDir: string; homeDir: string; cleanup(): void };

export type FakeModelConfig = {
  id?: string; // default "claude-sonnet-4-5"
  contextWindow?: number; // default 200000
  maxTokens?: number; // default 16384
  reasoning?: boolean; // default true
  /** USD per million tokens; default Sonnet-like 3 / 15 / 0.3 / 3.75. */
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Prompt-cache lifetimes in seconds (Pi's `promptCache`); makes the model eligible for cache warming. */
  promptCache?: { short?: number; long?: number };
  /** What the model takes (Pi's `input`, default `["text"]`): `["text", "image"]` sends images to it. */
  input?: Array<"text" | "image">;
};

export type AgentConfigOptions = {
  /** The fake server's `baseUrl` (http://127.0.0.1:PORT). */
  baseUrl: string;
  model?: FakeModelConfig;
  contextKeeper?: Record<string, unknown>;
  /** Merged (shallowly) over the default settings. */
  settings?: Record<string, unknown>;
  /** Raw settings.json text; replaces all generated settings. */
  settingsText?: string;
};

export function createPiWorkspace(files: SandboxFiles = {}): PiWorkspace {
  const root = mkdtempSync(join(tmpdir(), "pi-ck-"));
  const ws = { root, agentDir: join(root, "agent"), cwd: join(root, "project"), tmpDir: join(root, "tmp"), homeDir: join(root, "home") };
  for (const d of [ws.agentDir, ws.cwd, ws.tmpDir, ws.homeDir]) mkdirSync(d, { recursive: true });
  writeSandbox(ws.cwd, files);
  return { ...ws, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function writeAgentConfig(ws: PiWorkspace, o: AgentConfigOptions): void {
  const m = o.model ?? {};
  const modelId = m.id ?? "claude-sonnet-4-5";
  const models = {
    providers: {
      [FAKE_PROVIDER]: {
        api: "anthropic-messages",
        baseUrl: o.baseUrl,
        apiKey: "fake-key",
        models: [
          {
            id: modelId,
            name: `Fake ${modelId}`,
            reasoning: m.reasoning ?? true,
            contextWindow: m.contextWindow ?? 200_000,
            maxTokens: m.maxTokens ?? 16_384,
            cost: m.cost ?? { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
            ...(m.promptCache ? { promptCache: m.promptCache } : {}),
            ...(m.input ? { input: m.input } : {}),
          },
        ],
      },
    },
  };
  writeFileSync(join(ws.agentDir, "models.json"), JSON.stringify(models, null, 2));
  const settings = {
    cacheWarming: "off",
    retry: { enabled: false },
    defaultProjectTrust: "never",
    defaultProvider: FAKE_PROVIDER,
    defaultModel: modelId,
    quietStartup: true,
    ...(o.contextKeeper ? { contextKeeper: o.contextKeeper } : {}),
    ...o.settings,
  };
  writeFileSync(join(ws.agentDir, "settings.json"), o.settingsText ?? JSON.stringify(settings, null, 2));
}

export function childEnv(ws: PiWorkspace, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("PI_") && !k.startsWith("ANTHROPIC")) env[k] = v;
  }
  return {
    ...env,
    HOME: ws.homeDir,
    TMPDIR: ws.tmpDir,
    PI_CODING_AGENT_DIR: ws.agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    ...extra,
  };
}

/** Newest `*.jsonl` under the agent's sessions dir. */
export function latestSessionFile(agentDir: string): string | undefined {
  const found: Array<{ path: string; mtime: number }> = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (n.endsWith(".jsonl")) found.push({ path: p, mtime: st.mtimeMs });
    }
  };
  walk(join(agentDir, "sessions"));
  return found.sort((a, b) => b.mtime - a.mtime)[0]?.path;
}

export function readSessionEntries(file: string | undefined): Array<Record<string, unknown>> {
  if (!file) return [];
  try {
    return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
}
