import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fuzzSessions } from "./fuzz-core.ts";
import { runSession } from "./run-session.ts";
import type { FuzzFailure } from "./fuzz-core.ts";
import { checkRecovery, offersRef } from "./recovery-check.ts";
import { checkRequest, requestBody } from "./wire-check.ts";
import { MODELS, assistantMessage, toolResult, userMessage } from "./pi-sim.ts";
import type { ContextMessage } from "../../src/session/messages.ts";

const FIXTURES = join(import.meta.dir, "fixtures");
const CI_SEED = 20261201;
const CI_SESSIONS = 200;

describe("session fuzzer", () => {
  test(`a fixed-seed sample of ${CI_SESSIONS} sessions: nothing refused, every offered original recovered`, async () => {
    const { totals, first } = await fuzzSessions({ sessions: CI_SESSIONS, seed: CI_SEED, shrink: false });
    expect(first?.violation).toBeUndefined();
    expect(totals.failed).toBe(0);
    expect(totals.refused).toBe(0);
    expect(totals.refsRecovered).toBe(totals.refsOffered);
    // The sample must reach what it claims to check.
    expect(totals.sessions).toBe(CI_SESSIONS);
    expect(totals.requests).toBeGreaterThan(CI_SESSIONS * 5);
    expect(totals.refsOffered).toBeGreaterThan(100);
    expect(totals.restarts).toBeGreaterThan(10);
    expect(totals.faults).toBeGreaterThan(10);
    expect(totals.compactions).toBeGreaterThan(0);
    expect(totals.treeMoves).toBeGreaterThan(0);
  }, 300_000);

  const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith(".json"));
  test.each(fixtures)("fixture %s: fixed bugs replay clean, open ones still reproduce", async (file) => {
    const fixture = JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) as FuzzFailure;
    const outcome = await runSession(fixture.script, fixture.options);
    // An open fixture that no longer fails means the bug was fixed: drop its `open` field.
    if (fixture.open) expect(outcome.violation?.rule).toBe(fixture.violation.rule);
    else expect(outcome.violation).toBeUndefined();
  });
});

describe("the fuzzer's checks catch what they claim to", () => {
  const model = MODELS[0];
  const call = { type: "toolCall" as const, id: "toolu_000001", name: "read", arguments: { path: "a.ts" } };
  const raw: ContextMessage[] = [
    userMessage("go", 1),
    assistantMessage({ model, at: 2, thinking: "plan", calls: [call] }),
    toolResult(call, "file body", false, 3),
  ];

  test("an untouched render passes", () => {
    expect(checkRequest({ raw, rendered: raw, body: requestBody(raw, model, "high"), model })).toBeUndefined();
  });

  test("a render that drops a result is refused before the wire", () => {
    const rendered = raw.slice(0, 2);
    expect(checkRequest({ raw, rendered, body: requestBody(rendered, model, "high"), model })).toMatch(/without its result/);
  });

  test("current-loop thinking stripped by the render is refused when thinking is on", () => {
    const stripped = { ...raw[1], content: (raw[1] as { content: unknown[] }).content.slice(1) } as ContextMessage;
    const rendered = [raw[0], stripped, raw[2]];
    expect(checkRequest({ raw, rendered, body: requestBody(rendered, model, "high"), model })).toMatch(/thinking/);
  });

  test("a fifth cache mark and an empty text block are refused", () => {
    const body = requestBody(raw, model, "off");
    const marked = { ...body, messages: body.messages.map((m) => ({ ...m, content: (m.content as object[]).map((b) => ({ ...b, cache_control: { type: "ephemeral" as const } })) })) };
    expect(checkRequest({ raw, rendered: raw, body: marked as typeof body, model })).toMatch(/maximum of 4/);
    const empty = { ...body, messages: [...body.messages, { role: "user" as const, content: [{ type: "text" as const, text: " " }] }] };
    expect(checkRequest({ raw, rendered: raw, body: empty, model })).toMatch(/non-whitespace/);
  });

  test("a ref is offered only by its exact key", () => {
    expect(offersRef("see ref=a@1#1.", "a@1#1")).toBe(true);
    expect(offersRef("see ref=a@1#10.", "a@1#1")).toBe(false);
  });

  test("a recall that returns other bytes is reported", async () => {
    const stub = { ...raw[2], content: [{ type: "text", text: "[context-keeper] output pruned — recall with keeper_recall ref=toolu_000001@2#0." }] } as ContextMessage;
    const tally = { offered: new Set<string>(), recovered: new Set<string>(), fromSpill: new Set<string>(), unspilled: new Set<string>() };
    const failure = await checkRecovery({
      raw,
      rendered: [raw[0], raw[1], stub],
      branchMessages: raw,
      pageChars: 4,
      tally,
      recall: async (_ref, offset, limit) => {
        const text = "file bodY".slice(offset, offset + limit);
        const next = offset + limit < 9 ? offset + limit : undefined;
        return { text: `header\n${text}`, isError: false, details: { status: "ok", bodyStart: 7, ...(next !== undefined ? { nextOffset: next } : {}) } };
      },
    });
    expect(failure).toMatch(/not byte-exact/);
    expect(tally.offered.has("toolu_000001@2#0")).toBe(true);
    expect(tally.recovered.size).toBe(0);
  });
});
