/**
 * `npm run fuzz -- --sessions 10000 --seed 1`: run generated sessions through the engine and
 * print what was checked. A failure is shrunk to a minimal script and saved as a regression
 * fixture (`test/fuzz/fixtures/<name>.json`, replayed by `fuzz.test.ts`); exit code 1.
 *
 * Flags: --sessions N (default 1000), --seed S (default: time-based, printed),
 * --no-shrink, --fixture NAME (file name of a saved failure; default seed-<S>),
 * --strict-spill (an original at or above the spill threshold without a side file fails).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fuzzSessions, type FuzzTotals } from "./fuzz-core.ts";

export const FIXTURE_DIR = join(import.meta.dir, "fixtures");

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function count(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got "${value}"`);
  return n;
}

export function formatTotals(t: FuzzTotals, ms: number): string {
  return [
    `sessions            ${t.sessions} (${(ms / 1000).toFixed(1)} s)`,
    `requests checked    ${t.requests}`,
    `refused             ${t.refused}`,
    `failed sessions     ${t.failed}`,
    `originals recovered ${t.refsRecovered}/${t.refsOffered}`,
    `  from spill files  ${t.spillRecoveries} (after a compaction took them out of view)`,
    `  without side file ${t.unspilled} (at or above the spill threshold; --strict-spill fails on one)`,
    `flushes             ${t.flushes}`,
    `restarts survived   ${t.restarts}`,
    `faults survived     ${t.faults}`,
    `compactions         ${t.compactions}`,
    `/tree moves         ${t.treeMoves}`,
    `cold re-plans       ${t.coldReplans}`,
    `loop flushes        ${t.loopFlushes}`,
  ].join("\n");
}

async function main(args: string[]): Promise<number> {
  const sessions = count(flag(args, "sessions"), 1000, "sessions");
  const seed = count(flag(args, "seed"), Date.now() % 2 ** 31, "seed");
  const started = Date.now();
  const { totals, failure } = await fuzzSessions({
    sessions,
    seed,
    shrink: !args.includes("--no-shrink"),
    run: args.includes("--strict-spill") ? { strictSpill: true } : {},
    onProgress: (done, t) => {
      // Running totals, so a run stopped early still shows what it checked.
      if (done % 500 === 0) process.stderr.write(`… ${done}/${sessions} sessions\n${formatTotals(t, Date.now() - started)}\n`);
    },
  });
  console.log(`context-keeper session fuzzer, seed ${seed}`);
  console.log(formatTotals(totals, Date.now() - started));
  if (totals.failed === 0) return 0;
  if (!failure) return 1;
  mkdirSync(FIXTURE_DIR, { recursive: true });
  const file = join(FIXTURE_DIR, `${flag(args, "fixture") ?? `seed-${seed}`}.json`);
  writeFileSync(file, `${JSON.stringify(failure, null, 2)}\n`);
  console.log(`\nfirst failure (run path ${failure.path}): ${failure.original.rule}`);
  console.log(`shrunk to ${failure.script.actions.length} action(s): action ${failure.violation.action}: ${failure.violation.rule}`);
  console.log(`saved ${file}`);
  return 1;
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`fuzz: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  });
  process.exit(code);
}
