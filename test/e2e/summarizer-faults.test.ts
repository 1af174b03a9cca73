/**
 * The model summarizer's failure modes on the wire. One session, one prompt per case; the
 * flush after each prompt asks the (fake) model for summaries, and the side router answers
 * them per case: (a) HTTP 500, (b) an empty answer, (c) a hang longer than the ceiling,
 * (d) a stream whose events come slower than the idle timeout, (f) a steady trickle that
 * outlasts the ceiling, (e) a good summary. Pacing (d, f) is done by a small proxy in front
 * of the fake server that re-sends the SSE events of summary answers with gaps.
 *
 * Every failure must leave the session running (next prompts proceed, no 400, exit 0), the
 * batch pruned with the deterministic extractive summary, and the original recallable
 * (its recall index entry in the session file); (e) must carry the model's text.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { recallDeltasOf } from "../support/state/flush-entries.ts";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/summarize/summary-prompt.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic, type MainStep, type SideAnswer, type WireMessage, type WireRequest } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace, type RpcRecord, type RpcStep } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { blocksOf, STUB_HEAD, toolResultBlockText } from "./support/recall-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

// Margins of 4× and more around the timeouts: a loaded 2-core machine delays events.
const IDLE_MS = 1000;
const CEILING_MS = 3000;
const KEEPER = {
  pruning: { budgetTrigger: { enabled: false }, chainCompression: { enabled: false } },
  summarizer: { mode: "model", idleTimeoutMs: IDLE_MS, ceilingTimeoutMs: CEILING_MS },
};
const MODEL_SUMMARY = "MODEL-SUMMARY: the files were read and looked fine.";

type Case = "a-http-500" | "b-empty" | "c-hang" | "d-idle-stream" | "f-ceiling-trickle" | "e-model";
const CASES: Case[] = ["a-http-500", "b-empty", "c-hang", "d-idle-stream", "f-ceiling-trickle", "e-model"];

function sideAnswer(c: Case): SideAnswer {
  switch (c) {
    case "a-http-500":
      return { text: "", error: { status: 500, type: "api_error", message: "summarizer overloaded" } };
    case "b-empty":
      return { text: "" };
    case "c-hang":
      return { text: MODEL_SUMMARY, delayMs: CEILING_MS * 2 };
    case "d-idle-stream":
    case "f-ceiling-trickle":
      return { text: `${MODEL_SUMMARY} ${"padding ".repeat(80)}` }; // ~10 text deltas: a long paced stream
    case "e-model":
      return { text: MODEL_SUMMARY };
  }
}

/** Gap between re-sent SSE events of a summary answer, per case (undefined: pass through). */
function paceOf(c: Case): number | undefined {
  if (c === "d-idle-stream") return IDLE_MS * 2;
  if (c === "f-ceiling-trickle") return IDLE_MS / 4;
  return undefined;
}

const isSummaryRequest = (system: string) => system.startsWith(SUMMARY_SYSTEM_PROMPT.slice(0, 40));

/** One paced answer: how many of its events went out before the client hung up, and when. */
interface PacedStream {
  gapMs: number;
  events: number;
  sent: number;
  /** Ms from the first event to the client's cancel; undefined when it read to the end. */
  cancelledAfterMs?: number;
}

/** A proxy on 127.0.0.1 that forwards to the fake server and paces the SSE answers `gapFor` picks. */
function startPacingProxy(target: FakeAnthropic, gapFor: (body: string) => number | undefined): { url: string; paced: PacedStream[]; stop(): void } {
  const paced: PacedStream[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      const headers = new Headers(req.headers);
      headers.delete("host");
      headers.delete("content-length");
      const upstream = await fetch(`${target.baseUrl}${url.pathname}${url.search}`, { method: req.method, headers, body });
      const out = new Headers(upstream.headers);
      out.delete("content-length");
      out.delete("content-encoding");
      const gap = upstream.status === 200 ? gapFor(body) : undefined;
      if (gap === undefined) return new Response(upstream.body, { status: upstream.status, headers: out });
      const events = (await upstream.text()).split("\n\n").filter((e) => e.trim() !== "").map((e) => `${e}\n\n`);
      const encoder = new TextEncoder();
      const record: PacedStream = { gapMs: gap, events: events.length, sent: 0 };
      paced.push(record);
      let cancelled = false;
      let startedAt = 0;
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          startedAt = Date.now();
          for (const [i, e] of events.entries()) {
            if (cancelled) return;
            if (i > 0) await Bun.sleep(gap);
            if (cancelled) return;
            try {
              controller.enqueue(encoder.encode(e));
              record.sent++;
            } catch {
              return; // the client went away (the summarizer gave up)
            }
          }
          controller.close();
        },
        cancel() {
          cancelled = true;
          record.cancelledAfterMs = Date.now() - startedAt;
        },
      });
      return new Response(stream, { status: 200, headers: out });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, paced, stop: () => server.stop(true) };
}

/** Tool results of each human prompt's loop in a request, in prompt order. */
function resultsByPrompt(messages: WireMessage[]): string[][] {
  const out: string[][] = [];
  for (const m of messages) {
    const blocks = blocksOf(m);
    if (m.role === "user" && blocks.some((b) => b.type !== "tool_result")) out.push([]);
    for (const b of blocks) if (b.type === "tool_result") out.at(-1)?.push(toolResultBlockText(b));
  }
  return out;
}

const EXTRACTIVE_LINE = /status: .+ · \d+ lines · \d+ bytes/;

describe("model summarizer faults on the wire", () => {
  // Files, prompts and thinking from the generator; the loops are written here so that every
  // output is distinct (an identical output would be aliased to an earlier summary).
  const scenario = generateScenario({ seed: 23, prompts: CASES.length + 1, stepsPerPrompt: [2, 2], files: 2 * (CASES.length + 1), fileBytes: [4096, 20480] });
  const paths = Object.keys(scenario.files).filter((p) => p !== "README.md");
  const loops: MainStep[][] = scenario.prompts.map((_, i) => [
    { text: `Reading part ${i} (1/2).`, toolCalls: [{ name: "read", input: { path: paths[2 * i]! } }] },
    { text: `Reading part ${i} (2/2).`, toolCalls: [{ name: "bash", input: { command: `cat ${paths[2 * i + 1]!}` } }] },
    { text: `Part ${i} done.` },
  ]);

  /** The case of a summary request: the prompt whose files its batch read (the last prompt reuses the last case). */
  function caseOf(body: WireRequest): Case | undefined {
    if (!isSummaryRequest(systemText(body))) return undefined;
    const prompt = JSON.stringify(body.messages);
    const i = paths.findIndex((p) => prompt.includes(`path: ${p}\\n`) || prompt.includes(`command: cat ${p}\\n`));
    return i < 0 ? undefined : CASES[Math.min(Math.floor(i / 2), CASES.length - 1)];
  }

  test("HTTP 500, empty answer, hang, idle stream, ceiling trickle: extractive stubs, session runs on; a good answer is used", async () => {
    const sideCases: Case[] = [];
    const fake = startFakeAnthropic({
      script: loops.flat(),
      sideRouter: ({ request }) => {
        const c = caseOf(request.body);
        if (!c) return { text: "", error: { status: 400, type: "invalid_request_error", message: "unexpected side request" } };
        sideCases.push(c);
        return sideAnswer(c);
      },
    });
    const proxy = startPacingProxy(fake, (body) => {
      try {
        const c = caseOf(JSON.parse(body) as WireRequest);
        return c ? paceOf(c) : undefined;
      } catch {
        return undefined;
      }
    });
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const flushed = (n: number): RpcStep => ({
      waitFor: (r: RpcRecord) => r.method === "setStatus" && /· (\d+) flushes/.test(String(r.statusText ?? "")) && Number(/· (\d+) flushes/.exec(String(r.statusText))![1]) >= n,
      timeoutMs: CEILING_MS * 3,
    });
    const prompts: RpcStep[] = scenario.prompts.flatMap((p, i) => (i < CASES.length ? [p, flushed(i + 1)] : [p]));
    let run;
    try {
      run = await runPi({
        prompts,
        mode: "rpc",
        server: { ...fake, baseUrl: proxy.url },
        workspace,
        model: { id: "claude-sonnet-4-5", contextWindow: 1_000_000 },
        contextKeeper: KEEPER,
        timeoutMs: 150_000, // the faults take ~40 s; loaded machines need the rest
      });
    } finally {
      proxy.stop();
      await fake.stop();
    }

    expect(run.exitCode).toBe(0);
    expect(run.requests.filter((r) => r.status !== 200 && r.kind === "main").map((r) => r.errorMessage)).toEqual([]);
    // Every prompt ran its whole loop: 2 tool steps + the answer, and the last one too.
    expect(run.mainRequests).toHaveLength(loops.flat().length);
    expect(run.prompts.every((p) => p.requests.some((r) => r.kind === "main"))).toBe(true);
    for (const c of CASES) expect(sideCases.filter((x) => x === c).length).toBeGreaterThanOrEqual(1);

    // The last request shows every earlier prompt's loop pruned.
    const last = run.mainRequests.at(-1)!;
    const results = resultsByPrompt(last.body.messages);
    expect(results).toHaveLength(CASES.length + 1);
    const report: string[] = [];
    CASES.forEach((c, i) => {
      const stubs = results[i]!.filter((t) => t.startsWith(STUB_HEAD));
      const withSummary = stubs.filter((t) => !/ref=\S+(?: \([^)]*\))?: (?:summarized with|identical to the output of) ref=/.test(t) && /ref=\S+(?: \([^)]*\))?: /.test(t));
      report.push(`${c}: ${stubs.length}/${results[i]!.length} stubbed`);
      expect(stubs.length).toBe(results[i]!.length);
      expect(withSummary.length).toBeGreaterThanOrEqual(1);
      for (const t of withSummary) {
        if (c === "e-model") {
          expect(t).toContain(MODEL_SUMMARY);
          expect(t).not.toMatch(EXTRACTIVE_LINE);
        } else {
          expect(t).toMatch(EXTRACTIVE_LINE);
          expect(t).toMatch(/status: .* lines · \d+ bytes/);
          expect(t).not.toContain("MODEL-SUMMARY");
        }
      }
    });
    console.log(`[summarizer] ${report.join("; ")}; side requests ${sideCases.length}; run ${run.durationMs} ms`);
    console.log(`[summarizer] paced streams: ${proxy.paced.map((p) => `gap ${p.gapMs} ms, ${p.sent}/${p.events} events, cancelled after ${p.cancelledAfterMs ?? "-"} ms`).join("; ")}`);
    // The paced streams were cut short by the summarizer's own watchdog: (d) after one idle
    // gap, (f) while events still flowed, once the ceiling passed.
    const idle = proxy.paced.filter((p) => p.gapMs > IDLE_MS);
    const trickle = proxy.paced.filter((p) => p.gapMs < IDLE_MS);
    expect(idle.length).toBeGreaterThanOrEqual(1);
    expect(trickle.length).toBeGreaterThanOrEqual(1);
    for (const p of idle) {
      expect(p.sent).toBeLessThanOrEqual(2);
      expect(p.cancelledAfterMs).toBeDefined();
      expect(p.cancelledAfterMs!).toBeLessThan(p.gapMs); // cut before the second event was due
    }
    for (const p of trickle) {
      expect(p.sent).toBeGreaterThan(3);
      expect(p.sent).toBeLessThan(p.events);
      // ceiling 3000 ms at a 250 ms gap: 1 + 3000/250 = 13 events at most before the cut
      expect(p.sent).toBeLessThanOrEqual(1 + Math.ceil(CEILING_MS / p.gapMs) + 1);
      expect(p.cancelledAfterMs).toBeDefined();
      expect(p.cancelledAfterMs!).toBeGreaterThan(CEILING_MS / 2);
    }

    // Every stubbed original is in the recall index persisted in the session file.
    const indexed = new Set(
      recallDeltasOf(run.sessionEntries).flatMap((delta) => Object.keys(delta.entries)),
    );
    const refs = results.flat().flatMap((t) => (t.startsWith(STUB_HEAD) ? [/keeper_recall ref=(\S+?)(?: \([^)]*\))?[.:](?:\s|$)/.exec(t)![1]!] : []));
    expect(refs.length).toBeGreaterThanOrEqual(CASES.length * 2);
    expect(refs.filter((r) => !indexed.has(r))).toEqual([]);
  }, 200_000);
});
