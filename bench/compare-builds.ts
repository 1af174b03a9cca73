/**
 * Per-request cost of two builds in one process, requests alternating between them, so both
 * see the same machine state: this checkout's host against another checkout's (e.g. an older
 * commit extracted with `git archive <rev> | tar -x -C /tmp/old`, its node_modules linked).
 * Same growing session, fresh clones and payloads, real flushes as `bench/request-cost.ts`.
 * Run: `npx bun bench/compare-builds.ts <other checkout> [messages]`. Prints p10 / median / p90, and the medians of the requests right after a flush and of the others.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { generateSession, INFO, stateAfterFlushes } from "./bench-session.ts";
import { createRequestRunner, type RequestRunnerOptions, type RequestSample } from "./request-cost.ts";

const [otherDir, sizeArg] = process.argv.slice(2);
if (!otherDir) {
  console.error("usage: bun bench/compare-builds.ts <other checkout> [messages]");
  process.exit(1);
}
/** The other build's handlers: through its event table when it has one (this design), else its host's own `on…` handlers. */
const driver = resolve(otherDir, "test/support/host/keeper-driver.ts");
const otherHost = (existsSync(driver)
  ? ((await import(driver)) as typeof import("../test/support/host/keeper-driver.ts")).driveKeeper
  : ((await import(resolve(otherDir, "src/host/keeper-host.ts"))) as { createKeeperHost: RequestRunnerOptions["createHost"] }).createKeeperHost) as RequestRunnerOptions["createHost"];
const size = Number(sizeArg ?? 1000);
const samples = size >= 5000 ? 60 : 200;
const warmup = 10;
const start = size - samples;
const { messages: session, requestEnds } = generateSession(start + 2 * (samples + warmup) + 20);
const state = stateAfterFlushes(session.slice(0, start), requestEnds.filter((e) => e <= start), size > 2000 ? 5 : 1);
const model = { provider: INFO.provider, id: INFO.model, api: INFO.api };
const runners = { other: createRequestRunner({ session, start, state, model, createHost: otherHost }), this: createRequestRunner({ session, start, state, model }) };
const got: Record<keyof typeof runners, RequestSample[]> = { other: [], this: [] };
for (let r = 0; r < warmup + samples; r++) {
  const order: Array<keyof typeof runners> = r % 2 ? ["other", "this"] : ["this", "other"];
  for (const k of order) {
    const sample = await runners[k].step();
    if (sample && r >= warmup) got[k].push(sample);
  }
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * xs.length)];
const f = (x: number) => x.toFixed(2).padStart(7);
const load = await Bun.file("/proc/loadavg").text().then((t) => t.split(" ")[0]).catch(() => "?");
console.log(`${size} messages (${got.this[0]?.messages}–${got.this.at(-1)?.messages}), ${got.this.length} requests each, ${got.this.filter((s) => s.flushed).length} flushes; load average ${load}`);
console.log("build  quantile  context  before_req  msg_end     adds    clone  adds/clone");
for (const k of ["other", "this"] as const)
  for (const p of [0.1, 0.5, 0.9]) {
    const xs = got[k];
    const adds = q(xs.map((s) => s.total), p);
    const clone = q(xs.map((s) => s.clone), p);
    console.log(`${k.padEnd(6)} p${String(p * 100).padEnd(8)}${f(q(xs.map((s) => s.context), p))}  ${f(q(xs.map((s) => s.beforeRequest), p))}  ${f(q(xs.map((s) => s.messageEnd), p))}  ${f(adds)}  ${f(clone)}  ${(adds / clone).toFixed(2)}×`);
  }
for (const k of ["other", "this"] as const) {
  const split = (after: boolean) => got[k].filter((s) => s.afterFlush === after).map((s) => s.total);
  console.log(`${k.padEnd(6)} adds median: right after a flush ${f(q(split(true), 0.5))} (${split(true).length} requests), others ${f(q(split(false), 0.5))}`);
}
