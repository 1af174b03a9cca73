// Which program runs the Pi CLI: Pi 1.6.0 needs Node >= 22.19, the version its users run it on.
// Picked in this order, first that works:
//   1. PI_KEEPER_NODE (a path to a node binary), when set; PI_KEEPER_NODE=bun skips every Node;
//   2. the Node 22 binary of the `node-<platform>-<arch>` package (`npm run setup:pi-node`);
//   3. `node` on PATH;
// each only when it answers `--version` with 22.19 or newer. Otherwise the `bun` dev dependency
// runs Pi, and `notice` says so (callers print it once). Shared by `scripts/pi-with-keeper.mjs`
// (Node) and the e2e runner `test/support/pi-runner.ts` (bun), hence plain JavaScript.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

export const MIN_PI_NODE = [22, 19, 0];

/** "v22.23.5" → true when at least MIN_PI_NODE. */
export function isPiNodeVersion(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(version).trim());
  if (!m) return false;
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let i = 0; i < 3; i++) if (v[i] !== MIN_PI_NODE[i]) return v[i] > MIN_PI_NODE[i];
  return true;
}

function nodeVersion(command, env) {
  const r = spawnSync(command, ["--version"], { encoding: "utf8", timeout: 10_000, env });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The node binary of the platform package in `root`'s node_modules (it may not exist). */
export function bundledNodePath(root, platform = process.platform, arch = process.arch) {
  return join(root, "node_modules", `node-${platform === "win32" ? "win" : platform}-${arch}`, "bin", platform === "win32" ? "node.exe" : "node");
}

/**
 * @param {{ root: string, env?: Record<string, string | undefined> }} options  `env` also gives the
 *   PATH searched for `node`.
 * @returns {{ kind: "node" | "bun", command: string, version: string, notice?: string } | { kind: "none", notice: string }}
 */
export function findPiRuntime({ root, env = process.env }) {
  const candidates = [];
  const forceBun = env.PI_KEEPER_NODE === "bun";
  if (env.PI_KEEPER_NODE && !forceBun) candidates.push(env.PI_KEEPER_NODE);
  const bundled = bundledNodePath(root);
  if (!forceBun && existsSync(bundled)) candidates.push(bundled);
  if (!forceBun) candidates.push("node");
  const rejected = forceBun ? ["none: PI_KEEPER_NODE=bun"] : [];
  for (const command of candidates) {
    const version = nodeVersion(command, env);
    if (version && isPiNodeVersion(version)) return { kind: "node", command, version };
    rejected.push(`${command}${version ? ` (${version})` : " (not runnable)"}`);
  }
  const bun = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
  const why = `no Node >= ${MIN_PI_NODE.join(".")} found (tried ${rejected.join(", ")})`;
  if (!existsSync(bun)) return { kind: "none", notice: `${why}, and no bun in ${join(root, "node_modules", ".bin")}; run \`npm install\` first` };
  return { kind: "bun", command: bun, version: nodeVersion(bun, env) ?? "bun", notice: `${why}; running Pi under bun instead, which Pi's users do not` };
}
