import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundledNodePath, findPiRuntime, isPiNodeVersion } from "./pi-runtime.mjs";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A folder with fake executables, each printing `version` for `--version`. */
function fakeBins(bins: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-runtime-"));
  dirs.push(dir);
  for (const [rel, version] of Object.entries(bins)) {
    const path = join(dir, rel);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, `#!/bin/sh\necho ${version}\n`);
    chmodSync(path, 0o755);
  }
  return dir;
}

describe("isPiNodeVersion", () => {
  test("22.19.0 and later run Pi 1.6.0; earlier do not", () => {
    for (const v of ["v22.19.0", "v22.23.5", "22.20.1", "v23.0.0", "v26.12.1"]) expect(isPiNodeVersion(v)).toBe(true);
    for (const v of ["v22.18.9", "v20.20.2", "v21.99.99", "1.4.5", "", "garbage"]) expect(isPiNodeVersion(v)).toBe(false);
  });
});

describe("findPiRuntime", () => {
  test("PI_KEEPER_NODE wins when new enough", () => {
    const bins = fakeBins({ "mine/node": "v22.20.0", "path/node": "v24.0.0" });
    const r = findPiRuntime({ root: bins, env: { PI_KEEPER_NODE: join(bins, "mine/node"), PATH: join(bins, "path") } });
    expect(r).toEqual({ kind: "node", command: join(bins, "mine/node"), version: "v22.20.0" });
  });

  test("the platform package's node comes before node on PATH; a too-old one is skipped", () => {
    const root = fakeBins({ "path/node": "v24.1.0" });
    const bundled = bundledNodePath(root);
    mkdirSync(join(bundled, ".."), { recursive: true });
    writeFileSync(bundled, "#!/bin/sh\necho v22.23.5\n");
    chmodSync(bundled, 0o755);
    expect(findPiRuntime({ root, env: { PATH: join(root, "path") } })).toMatchObject({ kind: "node", command: bundled, version: "v22.23.5" });
    writeFileSync(bundled, "#!/bin/sh\necho v22.18.0\n");
    expect(findPiRuntime({ root, env: { PATH: join(root, "path") } })).toMatchObject({ kind: "node", command: "node", version: "v24.1.0" });
  });

  test("PI_KEEPER_NODE=bun skips every Node", () => {
    const root = fakeBins({ "path/node": "v24.1.0", "node_modules/.bin/bun": "1.4.5" });
    const r = findPiRuntime({ root, env: { PI_KEEPER_NODE: "bun", PATH: join(root, "path") } });
    expect(r).toMatchObject({ kind: "bun", command: join(root, "node_modules/.bin/bun") });
    expect(r.notice).toContain("PI_KEEPER_NODE=bun");
  });

  test("no Node >= 22.19: bun with a notice naming what was tried; without bun, none", () => {
    const root = fakeBins({ "path/node": "v20.20.2", "node_modules/.bin/bun": "1.4.5" });
    const r = findPiRuntime({ root, env: { PATH: join(root, "path") } });
    expect(r.kind).toBe("bun");
    expect(r.notice).toContain("node (v20.20.2)");
    expect(r.notice).toContain("under bun");
    rmSync(join(root, "node_modules"), { recursive: true });
    const none = findPiRuntime({ root, env: { PATH: join(root, "path") } });
    expect(none.kind).toBe("none");
    expect(none.notice).toContain("npm install");
  });
});
