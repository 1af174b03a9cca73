/**
 * Interactive pi (the TUI) in a detached tmux session, for terminal e2e tests: start it with
 * this extension on a workspace, type with `send-keys`, read the screen with `capture-pane`.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PI_CLI, REPO_ROOT, piRuntime } from "./pi-runner.ts";
import { childEnv, type PiWorkspace } from "./scenario-workspace.ts";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const tmux = (...args: string[]) => spawnSync("tmux", args, { encoding: "utf8" });

export interface TmuxPi {
  screen(): string;
  typeText(text: string): void;
  press(...keys: string[]): void;
  /** The screen once `pred` holds; throws with the last screen after `timeoutMs`. */
  waitForScreen(pred: (text: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  kill(): void;
}

/**
 * Start pi with this extension in a 180×50 tmux session named `session`; `env`: extra variables;
 * `discoverExtensions`: let Pi load the extensions and packages its settings name too (as a user's
 * Pi does), not only this clone's `-e`.
 */
export function startTmuxPi(o: { session: string; workspace: PiWorkspace; env?: Record<string, string>; label: string; discoverExtensions?: boolean }): TmuxPi {
  const env = childEnv(o.workspace, o.env);
  const script = join(o.workspace.root, "run-pi.sh");
  const exports = Object.entries(env)
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, "'\\''")}'`)
    .join("\n");
  writeFileSync(
    script,
    `#!/bin/sh\n${exports}\ncd '${o.workspace.cwd}'\nexec '${piRuntime().command}' '${PI_CLI}'${o.discoverExtensions ? "" : " --no-extensions"} --no-context-files --no-skills --no-prompt-templates -e '${REPO_ROOT}'\n`,
  );
  chmodSync(script, 0o755);
  const started = tmux("new-session", "-d", "-s", o.session, "-x", "180", "-y", "50", script);
  if (started.status !== 0) throw new Error(`[${o.label}] tmux new-session failed: ${started.stderr}`);
  const screen = (): string => tmux("capture-pane", "-p", "-J", "-t", o.session, "-S", "-300").stdout ?? "";
  return {
    screen,
    typeText: (text) => void tmux("send-keys", "-t", o.session, "-l", text),
    press: (...keys) => void tmux("send-keys", "-t", o.session, ...keys),
    async waitForScreen(pred, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        last = screen();
        if (pred(last)) return last;
        await sleep(200);
      }
      throw new Error(`[${o.label}] timed out waiting for ${what}; screen:\n${last}`);
    },
    kill: () => void tmux("kill-session", "-t", o.session),
  };
}
