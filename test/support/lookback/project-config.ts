/**
 * Configuration files of the lookback sandbox, one per format (JSON, YAML, TOML, dotenv), with
 * every value line recorded as a fact (the key as its cue).
 */
import type { Prng } from "../scenario-prng.ts";
import type { LineFact } from "./facts.ts";

export interface ConfigFile {
  path: string;
  text: string;
  facts: LineFact[];
}

const KEYS = ["strictMode", "timeoutMs", "maxRetries", "ttlSeconds", "maxEntries", "batchSize", "concurrency", "port", "flushIntervalMs", "quotaPerTenant", "backoffFactor", "windowTokens", "leaseSeconds", "evictionPolicy", "logLevel", "region", "compression"];
const STRINGS: Record<string, string[]> = {
  evictionPolicy: ["lru", "lfu", "fifo"],
  logLevel: ["info", "debug", "warn"],
  region: ["eu-west-1", "us-east-2", "ap-south-1"],
  compression: ["gzip", "zstd", "none"],
};

type Value = number | string | boolean;

function valueFor(prng: Prng, key: string): Value {
  if (STRINGS[key]) return prng.pick(STRINGS[key]!);
  if (key === "strictMode") return prng.chance(0.5);
  if (key === "backoffFactor") return Number((1 + prng.next() * 2).toFixed(2));
  if (key === "port") return prng.int(3000, 9999);
  return prng.int(2, 60) * (prng.chance(0.5) ? 100 : 1);
}

function sections(prng: Prng, names: readonly string[]): Array<[string, Array<[string, Value]>]> {
  return names.map((name) => {
    const keys = [...KEYS].sort(() => prng.next() - 0.5).slice(0, prng.int(3, 7));
    return [name, keys.map((k) => [k, valueFor(prng, k)] as [string, Value])];
  });
}

const snakeKey = (k: string) => k.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();

function jsonConfig(prng: Prng, names: readonly string[]): ConfigFile {
  const lines = ["{"];
  const facts: LineFact[] = [];
  const secs = sections(prng, names);
  secs.forEach(([name, pairs], i) => {
    lines.push(`  "${name}": {`);
    pairs.forEach(([k, v], j) => {
      const text = `"${k}": ${JSON.stringify(v)}`;
      lines.push(`    ${text}${j < pairs.length - 1 ? "," : ""}`);
      facts.push({ kind: "config", text, cue: `"${k}"`, line: lines.length });
    });
    lines.push(`  }${i < secs.length - 1 ? "," : ""}`);
  });
  lines.push("}");
  return { path: "config/app.json", text: lines.join("\n") + "\n", facts };
}

function yamlConfig(prng: Prng, names: readonly string[]): ConfigFile {
  const lines = ["# deployment settings", ""];
  const facts: LineFact[] = [];
  for (const [name, pairs] of sections(prng, names)) {
    lines.push(`${name}:`);
    for (const [k, v] of pairs) {
      const text = `${snakeKey(k)}: ${typeof v === "string" && prng.chance(0.4) ? `"${v}"` : String(v)}`;
      lines.push(`  ${text}`);
      facts.push({ kind: "config", text, cue: snakeKey(k), line: lines.length });
    }
    lines.push("");
  }
  return { path: "config/deploy.yaml", text: lines.join("\n"), facts };
}

function tomlConfig(prng: Prng, names: readonly string[]): ConfigFile {
  const lines = ["# limits applied at start-up", ""];
  const facts: LineFact[] = [];
  for (const [name, pairs] of sections(prng, names)) {
    lines.push(`[${name}]`);
    for (const [k, v] of pairs) {
      const text = `${snakeKey(k)} = ${typeof v === "string" ? `"${v}"` : String(v)}`;
      lines.push(text);
      facts.push({ kind: "config", text, cue: snakeKey(k), line: lines.length });
    }
    lines.push("");
  }
  return { path: "config/limits.toml", text: lines.join("\n"), facts };
}

function envConfig(prng: Prng, names: readonly string[]): ConfigFile {
  const lines = ["# copy to .env and adjust"];
  const facts: LineFact[] = [];
  for (const [name, pairs] of sections(prng, names.slice(0, 3))) {
    for (const [k, v] of pairs) {
      const text = `${name.toUpperCase()}_${snakeKey(k).toUpperCase()}=${String(v)}`;
      lines.push(text);
      facts.push({ kind: "config", text, cue: `${name.toUpperCase()}_${snakeKey(k).toUpperCase()}`, line: lines.length });
    }
  }
  return { path: ".env.example", text: lines.join("\n") + "\n", facts };
}

/** The four config files over the module names as sections. */
export function generateConfigs(prng: Prng, modules: readonly string[]): ConfigFile[] {
  const pick = () => [...modules].sort(() => prng.next() - 0.5).slice(0, prng.int(3, Math.min(6, modules.length)));
  return [jsonConfig(prng, pick()), yamlConfig(prng, pick()), tomlConfig(prng, pick()), envConfig(prng, pick())];
}
