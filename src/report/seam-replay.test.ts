/** The seam in the replay: the keeper arm marks the frozen boundary of its serialized requests as the live shell does. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { analyzeRun } from "../cache/analyzer.ts";
import { flattenRequest } from "../cache/flatten.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { ARMS } from "./arms.ts";
import { serializeForAnthropic } from "./anthropic-wire.ts";
import { keeperReplayConfig } from "./keeper-config.ts";
import { initialKeeperReplayState, stepKeeperSeam, type KeeperReplayState } from "./keeper-engine.ts";
import { toLlmMessages } from "./pi-session-contexts.ts";
import { replaySession } from "./replay.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { ContextMessage } from "../session/messages.ts";
import { emptyState } from "../state/schema.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";

const SAMPLE = join(import.meta.dir, "../../samples/sample-session.jsonl");
const info = { timestamp: 0, provider: "anthropic", api: "anthropic-messages", model: "claude-sonnet-4-5" };
const marksOf = (body: WireRequestBody) => flattenRequest(body).filter((b) => b.mark !== undefined);

function replayArm(name: string): { bodies: WireRequestBody[]; unmarked: WireRequestBody[] } {
  const run = ARMS.find((a) => a.name === name)!.start({ summaries: "size-model" });
  const unmarked: WireRequestBody[] = [];
  const r = replaySession({
    file: SAMPLE,
    ttlOnlyAnalysis: false,
    ...(run.transformContext ? { transformContext: run.transformContext as never } : {}),
    transformBody: (body, i, requestInfo) => {
      unmarked.push(body);
      return run.transformBody ? run.transformBody(body, i, requestInfo) : body;
    },
  });
  return { bodies: r.requests.map((q) => q.body), unmarked };
}

describe("keeper arm: seam marks on the replayed bodies", () => {
  const keeper = replayArm("keeper");
  const noSeam = replayArm("no-seam");
  const off = replayArm("discipline-off");

  test("never more than 4 marks; some requests carry the seam as a 4th mark inside history", () => {
    const counts = keeper.bodies.map((b) => marksOf(b).length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(4);
    const withSeam = keeper.bodies.filter((b, i) => marksOf(b).length === marksOf(keeper.unmarked[i]).length + 1);
    expect(withSeam.length).toBeGreaterThan(0);
    for (const b of withSeam) {
      // The extra mark sits before the last message (pi-ai marks only the last one).
      const messageMarks = marksOf(b).filter((m) => m.layer === "messages");
      expect(messageMarks[0].messageIndex).toBeLessThan(b.messages.length - 1);
    }
  });

  test("the seam only adds a mark: without marks the body is what was serialized", () => {
    keeper.bodies.forEach((b, i) => {
      const strip = (x: WireRequestBody) => flattenRequest(x).map((f) => f.bytes);
      expect(strip(b)).toEqual(strip(keeper.unmarked[i]));
    });
  });

  test("no-seam and discipline-off arms add no mark", () => {
    for (const arm of [noSeam, off]) arm.bodies.forEach((b, i) => expect(marksOf(b).length).toBe(marksOf(arm.unmarked[i]).length));
  });
});

describe("a rewrite after the seam reads up to it", () => {
  // History: prompt 0 with two 6000-char reads, its answer (t=6), prompt 1 with two more reads.
  const big = (tag: string) => `${tag} `.repeat(1500);
  const history: ContextMessage[] = [
    user("prompt 0", 1),
    assistant([call("c0", "read")], 2),
    result("c0", "read", big("zero"), 3),
    assistant([call("c1", "read")], 4),
    result("c1", "read", big("one"), 5),
    assistant([text("done")], 6),
    user("prompt 1", 7),
    assistant([call("c2", "read")], 8),
    result("c2", "read", big("two"), 9),
    assistant([call("c3", "read")], 10),
    result("c3", "read", big("three"), 11),
  ];
  const requestA = history.slice(0, 9); // ends with result c2
  // Request B: result c2 (after the frozen boundary) is stubbed, and c3 came back.
  const requestB = history.map((m, i) => (i === 8 ? result("c2", "read", "[stub]", 9) : m));
  const serialize = (messages: ContextMessage[]) => serializeForAnthropic(toLlmMessages(messages as never), { model: { provider: "anthropic", api: "anthropic-messages", id: "claude-sonnet-4-5" } });
  const frozenAt6 = (rendered: ContextMessage[], base: KeeperReplayState = initialKeeperReplayState()): KeeperReplayState => {
    const keeper = { ...emptyState(), frontier: { ...emptyState().frontier, frozenThroughTimestamp: 6 } };
    return { ...base, engine: { ...base.engine, keeper, lastRender: { raw: rendered, rendered, state: keeper } } };
  };

  function run(settings: typeof DEFAULT_SETTINGS) {
    const deps = { config: keeperReplayConfig(settings), discipline: settings.cache };
    const a = stepKeeperSeam(frozenAt6(requestA), serialize(requestA), info, deps);
    const b = stepKeeperSeam(frozenAt6(requestB, a.state), serialize(requestB), info, deps);
    return { a, b, analysis: analyzeRun([{ body: a.body, timestamp: 1_000 }, { body: b.body, timestamp: 11_000 }]) };
  }

  test("with the seam: request B reads the prefix through the frozen history; without it, nothing", () => {
    const seamed = run(DEFAULT_SETTINGS);
    // Wire messages: 0 user, 1 a(c0), 2 r0, 3 a(c1), 4 r1, 5 a(done), 6 user, 7 a(c2), 8 r2 ...
    // The answer "done" carries no id the wire can be matched by: the seam falls back to the
    // nearest identifiable message before it, result c1 (wire 4).
    expect(seamed.a.state.engine.ledger.seam).toEqual({ previous: expect.objectContaining({ seamMessageIndex: 4 }), placed: true });
    expect(seamed.b.state.engine.ledger.seam.placed).toBe(true);
    const seamBlock = flattenRequest(seamed.b.body).findIndex((f) => f.mark !== undefined && f.messageIndex === 4);
    expect(seamBlock).toBeGreaterThanOrEqual(0);
    const b = seamed.analysis[1];
    expect(b.readEnd).toBe(seamBlock);
    expect(b.read).toBe(b.prefixTokens[seamBlock]);
    expect(b.read).toBeGreaterThan(3000); // two 6000-char results ≈ 2 × 1.5k tokens

    const plain = run({ ...DEFAULT_SETTINGS, cache: { ...DEFAULT_SETTINGS.cache, seam: false } });
    expect(marksOf(plain.b.body).length).toBe(marksOf(serialize(requestB)).length);
    expect(plain.b.state.engine.ledger.seam.placed).toBe(false);
    expect(plain.analysis[1].read).toBe(0);
    expect(plain.analysis[1].write).toBeGreaterThan(b.write);
  });

  test("discipline off: no seam whatever cache.seam says", () => {
    const off = run({ ...DEFAULT_SETTINGS, cache: { ...DEFAULT_SETTINGS.cache, discipline: false } });
    expect(marksOf(off.b.body).length).toBe(marksOf(serialize(requestB)).length);
    expect(off.analysis[1].read).toBe(0);
  });
});
