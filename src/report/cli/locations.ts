/**
 * Where the report reads and writes: the default session (newest under Pi's sessions dir,
 * else the bundled sample), the output directory and the rule that keeps it away from the
 * user's sessions, and the models' context windows from pi-ai's bundled model data.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const BUNDLED_SAMPLE = join(REPO_ROOT, "samples", "sample-session.jsonl");
export const DEFAULT_OUT_DIR = "pi-context-keeper-report";

/** The `version` of this package's package.json ("unknown" when it cannot be read). */
export function packageVersion(root = REPO_ROOT): string {
  try {
    const v = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown }).version;
    return typeof v === "string" ? v : "unknown";
  } catch {
    return "unknown";
  }
}

/** Every `*.jsonl` at most `depth` directories below `dir` (Pi keeps one directory per cwd). */
export function sessionFiles(dir: string, depth = 2): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let st;
    try {
      st = statSync(path);
    } catch {
      continue;
    }
    if (st.isDirectory() && depth > 0) out.push(...sessionFiles(path, depth - 1));
    else if (st.isFile() && name.endsWith(".jsonl")) out.push(path);
  }
  return out;
}

export interface SessionFileInfo {
  path: string;
  mtimeMs: number;
}

/** Every session file under Pi's sessions folder with its modification time; `exists` false when the folder is not there. */
export function listSessionFiles(sessionsDir: string): { exists: boolean; files: SessionFileInfo[] } {
  if (!existsSync(sessionsDir)) return { exists: false, files: [] };
  const files: SessionFileInfo[] = [];
  for (const path of sessionFiles(sessionsDir)) {
    try {
      files.push({ path, mtimeMs: statSync(path).mtimeMs });
    } catch {
      files.push({ path, mtimeMs: Number.NaN });
    }
  }
  return { exists: true, files };
}

export function newestSession(sessionsDir: string): string | undefined {
  let best: { path: string; mtime: number } | undefined;
  for (const path of sessionFiles(sessionsDir)) {
    const mtime = statSync(path).mtimeMs;
    if (!best || mtime > best.mtime) best = { path, mtime };
  }
  return best?.path;
}

const isInside = (child: string, parent: string) => {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/** Why `outDir` may not be written to, or undefined when it may. */
export function outDirProblem(outDir: string, inputs: readonly string[], sessionsDir: string): string | undefined {
  const out = resolve(outDir);
  if (isInside(out, resolve(sessionsDir))) return `--out ${outDir} is inside the Pi sessions dir ${sessionsDir}; choose another directory`;
  for (const f of inputs) if (resolve(dirname(f)) === out) return `--out ${outDir} is the directory of the session ${f}; choose another directory`;
  return undefined;
}

/**
 * pi-ai's bundled model data: beside its resolved entry (`dist/index.js` → `dist/providers/data`),
 * which finds it in a clone and in a registry install (where pi-ai sits beside this package),
 * else under `root`'s node_modules.
 */
export function piAiModelDataDir(root = REPO_ROOT): string {
  try {
    return join(dirname(fileURLToPath(import.meta.resolve("@earendil-works/pi-ai"))), "providers", "data");
  } catch {
    return join(root, "node_modules", "@earendil-works", "pi-ai", "dist", "providers", "data");
  }
}

/** A lookup of context windows from pi-ai's model data (200k when unknown). */
export function contextWindowLookup(dataDir = piAiModelDataDir()): (info: { provider: string; model: string }) => number {
  const cache = new Map<string, Record<string, { id?: string; contextWindow?: number }>>();
  const load = (provider: string) => {
    if (cache.has(provider)) return cache.get(provider)!;
    let models: Record<string, { id?: string; contextWindow?: number }> = {};
    const path = join(dataDir, `${provider.replace(/[^a-z0-9-]/gi, "")}.json`);
    try {
      if (existsSync(path)) {
        const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, Record<string, { id?: string; contextWindow?: number }>>;
        for (const byApi of Object.values(data)) models = { ...models, ...byApi };
      }
    } catch {
      models = {};
    }
    cache.set(provider, models);
    return models;
  };
  return ({ provider, model }) => {
    const hit = Object.values(load(provider)).find((m) => m.id === model);
    return typeof hit?.contextWindow === "number" && hit.contextWindow > 0 ? hit.contextWindow : 200_000;
  };
}
