// Fetches a Node that can run Pi (>= 22.19) for the e2e tests and `npm run pi`, from the npm
// registry's `node-<platform>-<arch>` package, into this clone's node_modules without recording it
// (`--no-save`): a dev dependency would make `npm install` fail on every other platform
// (EBADPLATFORM). Nothing here is needed to use the extension. When the package cannot be had,
// the e2e runner falls back to bun with a printed notice (scripts/pi-runtime.mjs).
//
//   npm run setup:pi-node
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundledNodePath, findPiRuntime } from "./pi-runtime.mjs";

export const PI_NODE_VERSION = "22.23.5";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = `node-${process.platform === "win32" ? "win" : process.platform}-${process.arch}`;

const before = findPiRuntime({ root });
if (before.kind === "node") {
  console.log(`setup:pi-node: Pi will run under ${before.command} (${before.version}); nothing to fetch`);
  process.exit(0);
}
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const r = spawnSync(npm, ["install", "--no-save", "--no-audit", "--no-fund", `${pkg}@${PI_NODE_VERSION}`], { cwd: root, stdio: "inherit" });
const after = findPiRuntime({ root });
if (r.status === 0 && after.kind === "node") {
  console.log(`setup:pi-node: ${pkg}@${PI_NODE_VERSION} installed; Pi will run under ${bundledNodePath(root)} (${after.version})`);
} else {
  console.log(`setup:pi-node: could not install ${pkg}@${PI_NODE_VERSION}; ${after.notice ?? "Pi will run under bun"}`);
}
