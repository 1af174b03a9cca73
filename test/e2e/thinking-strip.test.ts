/**
 * The flush-gated thinking strip on the wire: the real pi CLI with this extension against the
 * fake Anthropic server (which answers 400 when the current tool loop's thinking is altered).
 *
 * Every request is checked against the persisted frontier: the messages sent without thinking
 * must be exactly the closed-cycle assistant messages older than a boundary that was current
 * while the request was rendered. When no frontier entry was written since the previous
 * request, only one boundary qualifies, so the stripped set cannot move between flushes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { frontiersAlong } from "../support/state/flush-entries.ts";
import { startFakeAnthropic, type MainStep, type RecordedRequest, type WireMessage } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiRunResult, type PiWorkspace } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";
import { analyze, bustIndices, frontierEntryTimes, firstRequestsAfterFlush, withoutCacheControl } from "./support/wire-checks.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

const KEEP = 4;
const STRIP = { mode: "flush-gated", keepLastTurns: KEEP };
// A small window lets the mid-loop budget trigger fire when the context nears it (half of 80k
// = 40k tokens, re-armed after 10k of growth); Pi's own compaction and the background compaction stay out of the way.
const MODEL = { id: "claude-sonnet-4-5", contextWindow: 80_000 };
const NO_COMPACTION = { compaction: { enabled: false } };

// ---- wire helpers -------------------------------------------------------------------------

type Block = { type: string; id?: string; text?: string; thinking?: string };
const blocks = (m: { content?: unknown }): Block[] => (Array.isArray(m.content) ? (m.content as Block[]) : []);

/** An assistant message's identity across requests: its tool-use ids, else its text. */
function keyOf(m: { content?: unknown }, idType: "tool_use" | "toolCall"): string {
  const ids = blocks(m).filter((b) => b.type === idType).map((b) => b.id);
  if (ids.length > 0) return `calls:${ids.join(",")}`;
  return `text:${blocks(m).filter((b) => b.type === "text").map((b) => b.text).join("\n")}`;
}

const hasThinking = (m: WireMessage) => blocks(m).some((b) => b.type === "thinking" || b.type === "redacted_thinking");
const isUserText = (m: WireMessage) => m.role === "user" && (typeof m.content === "string" || blocks(m).some((b) => b.type === "text"));

interface SentAssistant {
  key: string;
  thinking: boolean;
  /** After the last user text turn, or the last assistant message: never stripped. */
  protected: boolean;
  thinkingChars: number;
}

function sentAssistants(r: RecordedRequest): SentAssistant[] {
  const msgs = r.body.messages;
  let lastUserText = -1;
  msgs.forEach((m, i) => (isUserText(m) ? (lastUserText = i) : undefined));
  const lastAssistant = msgs.findLastIndex((m) => m.role === "assistant");
  return msgs.flatMap((m, i) =>
    m.role !== "assistant"
      ? []
      : [{ key: keyOf(m, "tool_use"), thinking: hasThinking(m), protected: i > lastUserText || i === lastAssistant, thinkingChars: 0 }],
  );
}

/** Session-file facts: assistant timestamps and thinking sizes by key, frontier snapshots in order. */
function sessionFacts(entries: PiRunResult["sessionEntries"]) {
  const stamp = new Map<string, number>();
  const thinkingChars = new Map<string, number>();
  const frontiers: Array<{ at: number; flushSeq: number; boundary: number | undefined }> = [];
  for (const e of entries) {
    const msg = e.message as { role?: string; timestamp?: number; content?: unknown } | undefined;
    if (e.type === "message" && msg?.role === "assistant" && typeof msg.timestamp === "number") {
      const key = keyOf(msg, "toolCall");
      stamp.set(key, msg.timestamp);
      thinkingChars.set(key, blocks(msg).reduce((n, b) => n + (b.type === "thinking" ? String(b.thinking ?? "").length : 0), 0));
    }
  }
  for (const { entry, frontier } of frontiersAlong(entries)) {
    frontiers.push({ at: Date.parse(String(entry.timestamp)), flushSeq: frontier.flushSeq, boundary: frontier.thinkingStripBoundaryTimestamp });
  }
  return { stamp, thinkingChars, frontiers };
}

/** The boundaries that were current at some moment in (from, to]: the one at `from`, then every later write. */
function boundariesDuring(frontiers: ReturnType<typeof sessionFacts>["frontiers"], from: number, to: number): Array<number | undefined> {
  const before = frontiers.filter((f) => f.at <= from).at(-1);
  return [before?.boundary, ...frontiers.filter((f) => f.at > from && f.at <= to).map((f) => f.boundary)];
}

interface StripReport {
  requests: number;
  busts: number[];
  afterFlush: number[];
  boundaryMoves: number;
  strippedAtEnd: number;
  assistantsAtEnd: number;
  strippedCharsAtEnd: number;
  lastRequestBytes: number;
}

/** All the wire checks of the acceptance, shared by the variants. Returns what it measured. */
function checkFlushGatedStrip(run: PiRunResult): StripReport {
  // The fake server never refused a request (current-loop thinking intact, pairing valid).
  expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
  const main = run.mainRequests;
  const { stamp, thinkingChars, frontiers } = sessionFacts(run.sessionEntries);
  expect(frontiers.length).toBeGreaterThanOrEqual(2);

  // The boundary only moves forward, and only inside frontier writes (flushes).
  const boundaries = frontiers.map((f) => f.boundary);
  for (let i = 1; i < boundaries.length; i++) {
    if (boundaries[i - 1] !== undefined) expect(boundaries[i]).toBeGreaterThanOrEqual(boundaries[i - 1]!);
    expect(frontiers[i]!.flushSeq).toBe(frontiers[i - 1]!.flushSeq + 1);
  }
  const boundaryMoves = boundaries.filter((b, i) => b !== (i === 0 ? undefined : boundaries[i - 1])).length;

  // Every bust is the first request after a flush.
  const flushTimes = frontierEntryTimes(run.sessionEntries);
  const afterFlush = firstRequestsAfterFlush(main, flushTimes);
  const busts = bustIndices(analyze(main));
  expect(busts.filter((i) => !afterFlush.has(i))).toEqual([]);

  // Each request strips exactly the closed-cycle messages older than a boundary current while it was rendered.
  const strippedOnce = new Set<string>();
  main.forEach((r, i) => {
    const sent = sentAssistants(r);
    const from = i === 0 ? Number.NEGATIVE_INFINITY : main[i - 1]!.arrivedAtMs;
    const candidates = boundariesDuring(frontiers, from, r.arrivedAtMs);
    if (!afterFlush.has(i)) expect(candidates).toHaveLength(1);
    const observed = sent.filter((s) => !s.thinking).map((s) => s.key);
    const expectedFor = (b: number | undefined) =>
      sent.filter((s) => !s.protected && b !== undefined && stamp.get(s.key)! < b).map((s) => s.key);
    expect(candidates.map(expectedFor).map((e) => JSON.stringify(e))).toContain(JSON.stringify(observed));
    for (const s of sent) {
      expect(stamp.has(s.key)).toBe(true);
      // Once sent without thinking, a message never gets it back.
      if (s.thinking) expect(strippedOnce.has(s.key)).toBe(false);
      else strippedOnce.add(s.key);
    }
  });

  const last = sentAssistants(main.at(-1)!).filter((s) => !s.thinking);
  return {
    requests: main.length,
    busts,
    afterFlush: [...afterFlush],
    boundaryMoves,
    strippedAtEnd: last.length,
    assistantsAtEnd: sentAssistants(main.at(-1)!).length,
    strippedCharsAtEnd: last.reduce((n, s) => n + (thinkingChars.get(s.key) ?? 0), 0),
    lastRequestBytes: main.at(-1)!.raw.length,
  };
}

// ---- tests --------------------------------------------------------------------------------

describe("flush-gated thinking strip on the wire", () => {
  const scenario = generateScenario({ seed: 11, prompts: 4, stepsPerPrompt: [8, 12], files: 8, fileBytes: [2048, 16384] });
  const run = (contextKeeper: Record<string, unknown>) => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    return runPi({ prompts: scenario.prompts, mode: "rpc", workspace, script: scenario.steps, thinking: "medium", model: MODEL, settings: NO_COMPACTION, contextKeeper, timeoutMs: 60_000 });
  };

  test("with pruning: frozen between flushes, monotonic, never given back, no 400", async () => {
    expect(scenario.stepsByPrompt.every((s) => s.length > KEEP + 1)).toBe(true);
    const keep = await run({ thinkingStrip: STRIP, summarizer: { mode: "extractive" }, compaction: { enabled: false } });
    const report = checkFlushGatedStrip(keep);
    console.log(`[thinking/pruning on] ${JSON.stringify(report)}`);
    // Something was actually stripped by the end (the exact sets were checked per request).
    expect(report.strippedAtEnd).toBeGreaterThan(0);
    expect(report.boundaryMoves).toBeGreaterThanOrEqual(scenario.prompts.length - 1);
    // At most one bust per flush (one per user request plus the mid-loop budget flushes).
    expect(report.busts.length).toBeLessThanOrEqual(report.afterFlush.length);
  }, 60_000);

  // With pruning off, flushes still run for the strip alone (`flushesActive` in
  // src/engine/session.ts), so the boundary is persisted and moves only at flushes.
  test("with pruning off: the strip alone still flushes its boundary and never busts inside a loop", async () => {
    const keep = await run({ thinkingStrip: STRIP, summarizer: { mode: "extractive" }, pruning: { enabled: false }, compaction: { enabled: false } });
    const report = checkFlushGatedStrip(keep);
    console.log(`[thinking/pruning off] ${JSON.stringify(report)}`);
    expect(report.strippedAtEnd).toBeGreaterThan(0);
    expect(report.busts.length).toBeLessThanOrEqual(scenario.prompts.length);
  }, 60_000);
});

describe("the thinking boundary across a restart", () => {
  const scenario = generateScenario({ seed: 17, prompts: 3, stepsPerPrompt: [7, 9], files: 6, fileBytes: [2048, 8192] });
  const file = Object.keys(scenario.files)[0]!;
  // A short question whose loop is cut by a provider error: no flush follows an error, so the
  // last pre-restart request was rendered from the very frontier the session file holds. Its
  // two tool steps are newer than the boundary, which a live count of 4 would not keep.
  const quick: MainStep[] = [
    { thinking: "A quick look at one file should answer the build question.", toolCalls: [{ name: "read", input: { path: file } }] },
    { thinking: "One more look at the same file to be sure of the build status.", toolCalls: [{ name: "bash", input: { command: `wc -l ${file}` } }] },
    { error: { status: 500, type: "api_error", message: "overloaded" } },
  ];

  test("a resumed session strips exactly what the last request before the restart stripped", async () => {
    const workspace = createPiWorkspace(scenario.files);
    workspaces.push(workspace);
    const [p1, p2, p3] = scenario.stepsByPrompt as [MainStep[], MainStep[], MainStep[]];
    const server = startFakeAnthropic({ script: [...p1, ...p2, ...quick, ...p3], idNonce: "same" });
    const common = {
      server,
      mode: "rpc" as const,
      thinking: "medium" as const,
      model: MODEL,
      settings: NO_COMPACTION,
      contextKeeper: { thinkingStrip: STRIP, summarizer: { mode: "extractive" }, pruning: { budgetTrigger: { enabled: false } }, compaction: { enabled: false } },
      timeoutMs: 60_000,
    };
    try {
      const before = await runPi({ ...common, workspace, prompts: [scenario.prompts[0]!, scenario.prompts[1]!, "Quick check: is the build green?"] });
      const resumed = await runPi({ ...common, resume: workspace, prompts: [scenario.prompts[2]!] });
      // Only the scripted error was refused; the resumed session's thinking passed the signature checks.
      expect([...before.requests, ...resumed.requests].filter((r) => r.status !== 200).map((r) => r.status)).toEqual([500]);

      const lastBefore = before.mainRequests.at(-1)!;
      const firstAfter = resumed.mainRequests[0]!;
      const { stamp, frontiers } = sessionFacts(resumed.sessionEntries);
      // The boundary went through the session file: persisted before the restart, nothing written since.
      const persisted = frontiers.filter((f) => f.at <= lastBefore.arrivedAtMs).at(-1)!;
      expect(typeof persisted.boundary).toBe("number");
      expect(frontiers.filter((f) => f.at > lastBefore.arrivedAtMs && f.at <= firstAfter.arrivedAtMs)).toEqual([]);

      const strippedKeys = (r: RecordedRequest) => sentAssistants(r).filter((s) => !s.thinking).map((s) => s.key);
      const stripped = strippedKeys(lastBefore);
      expect(stripped.length).toBeGreaterThan(0);
      expect(strippedKeys(firstAfter)).toEqual(stripped);
      expect(stripped.every((k) => stamp.get(k)! < persisted.boundary!)).toBe(true);
      // A strip recomputed from the live count (keep the last 4) would differ: the restored boundary is what counts.
      const sent = sentAssistants(firstAfter);
      const liveCount = sent.slice(0, -KEEP).filter((s) => !s.protected).map((s) => s.key);
      expect(liveCount).not.toEqual(stripped);

      // The history before the unanswered question goes out byte-identical, so the restart reads the cache.
      const last = withoutCacheControl(lastBefore.body.messages);
      const first = withoutCacheControl(firstAfter.body.messages);
      expect(JSON.stringify(first.slice(0, last.length - 1))).toBe(JSON.stringify(last.slice(0, last.length - 1)));
      const all = [...before.mainRequests, ...resumed.mainRequests];
      expect(bustIndices(analyze(all)).filter((i) => i >= before.mainRequests.length)).toEqual([]);
      console.log(`[thinking/restart] stripped ${stripped.length} of ${sent.length} assistant messages before and after; boundary ${persisted.boundary}`);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
