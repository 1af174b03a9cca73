import { describe, expect, test } from "bun:test";
import type { MainStep, RecordedRequest, WireMessage, WireRequest } from "../../test/support/fake-anthropic/types.ts";
import type { CallSpec } from "../../test/support/lookback/calls.ts";
import type { LookbackScenario, Need } from "../../test/support/lookback/scenario.ts";
import { MAX_ATTEMPTS, createLookbackModel, outcomeCounts } from "./lookback-model.ts";
import { condenseRefIn, keeperRefIn, nextRecallOffset, requestText } from "./lookback-wire.ts";

const FACT = "export function settleLease(input: number): number";
const origin: CallSpec = { call: { id: "toolu_o1", name: "read", input: { path: "src/lease.ts" } }, facts: [{ kind: "definition", text: FACT, cue: "settleLease" }], fails: false, target: "src/lease.ts" };

function scenario(): LookbackScenario {
  const need: Need = { id: "n1.0", fact: origin.facts[0]!, origin, originPrompt: 0, prompt: 1, step: 0 };
  return {
    seed: 9,
    density: "some",
    prompts: ["Task 1: read", "Task 2: use"],
    stepsByPrompt: [
      [{ toolCalls: [origin.call], needs: [] }, { text: "done 1", needs: [] }],
      [{ toolCalls: [{ id: "toolu_p2", name: "bash", input: { command: "ls" } }], text: `Using \`${FACT}\``, needs: [need] }, { text: "done 2", needs: [] }],
    ],
    files: {},
    needs: [need],
    calls: [origin],
  };
}

const user = (text: string): WireMessage => ({ role: "user", content: [{ type: "text", text }] });
const results = (...r: Array<[string, string]>): WireMessage => ({ role: "user", content: r.map(([id, content]) => ({ type: "tool_result", tool_use_id: id, content })) });
const assistantCalls = (...calls: Array<[string, string, Record<string, unknown>]>): WireMessage => ({ role: "assistant", content: calls.map(([id, name, input]) => ({ type: "tool_use", id, name, input })) });
const KEEPER_TOOL = { name: "keeper_recall", input_schema: { properties: { ref: {}, pattern: {}, offset: {} } } };
const PAGE_TOOL = { name: "keeper_recall", input_schema: { properties: { ref: {}, offset: {} } } };

let seq = 0;
function ask(model: ReturnType<typeof createLookbackModel>, messages: WireMessage[], tools: WireRequest["tools"] = []): MainStep {
  const request = { seq: seq++, body: { messages, tools } } as unknown as RecordedRequest;
  return model.script({ request, kindIndex: 0 }) as MainStep;
}

/** Prompt 1 played out: the call, its raw result, the answer. */
function playPrompt1(model: ReturnType<typeof createLookbackModel>, tools: WireRequest["tools"]): WireMessage[] {
  const h: WireMessage[] = [user("Task 1: read")];
  expect(ask(model, h, tools).toolCalls?.[0]?.id).toBe("toolu_o1");
  h.push(assistantCalls(["toolu_o1", "read", { path: "src/lease.ts" }]), results(["toolu_o1", `line\n${FACT} {\n}`]));
  expect(ask(model, h, tools).text).toBe("done 1");
  h.push({ role: "assistant", content: [{ type: "text", text: "done 1" }] });
  return h;
}

describe("looking-back fake model", () => {
  test("request text: texts, tool results and call arguments, not thinking", () => {
    const body: WireRequest = {
      messages: [user("a"), { role: "assistant", content: [{ type: "thinking", thinking: "secret" }, { type: "tool_use", id: "x", name: "bash", input: { command: "cat b" } }] }, results(["x", "c"])],
    };
    const text = requestText(body);
    expect(text).toContain("a");
    expect(text).toContain("cat b");
    expect(text).toContain("c");
    expect(text).not.toContain("secret");
  });

  test("refs: this extension's occurrence key of the exact id; pi-condense's stub ref, a line naming the call, or the raw id", () => {
    expect(keeperRefIn("see ref=toolu_12@17#0 and toolu_1@5#2", ["toolu_1"])).toBe("toolu_1@5#2");
    expect(keeperRefIn("ref=toolu_12@17#0", ["toolu_1"])).toBeUndefined();
    const stub: WireRequest = { messages: [results(["toolu_1", "[Summarized in pruner summary, ref `t7`. Use context_tree_query to retrieve full output.]"])] };
    expect(condenseRefIn(stub, requestText(stub), ["toolu_1"], "src/a.ts")).toBe("t7");
    const line: WireRequest = { messages: [user("- `t3` read src/a.ts: 40 lines")] };
    expect(condenseRefIn(line, requestText(line), ["toolu_1"], "src/a.ts")).toBe("t3");
    const raw: WireRequest = { messages: [user("Refs: toolu_1, toolu_2")] };
    expect(condenseRefIn(raw, requestText(raw), ["toolu_1"], "src/b.ts")).toBe("toolu_1");
    expect(nextRecallOffset("[keeper_recall ref=a] chars 0-10 of 20, next offset 10\nbody")).toBe(10);
    expect(nextRecallOffset("[keeper_recall ref=a] chars 0-10 of 10, end of output\nbody")).toBeUndefined();
  });

  test("a fact in the request is in context: the step goes out as scripted", () => {
    const model = createLookbackModel(scenario());
    const h = playPrompt1(model, [KEEPER_TOOL]);
    h.push(user("Task 2: use"));
    expect(ask(model, h, [KEEPER_TOOL]).toolCalls?.[0]?.id).toBe("toolu_p2");
    expect(outcomeCounts(model.report())).toEqual({ context: 1, recalled: 0, "re-run": 0, lost: 0 });
    expect(model.report().factNotInOrigin).toEqual([]);
  });

  test("a pruned fact with a visible ref: keeper_recall with the cue as pattern, then the step", () => {
    const model = createLookbackModel(scenario());
    const h = playPrompt1(model, [KEEPER_TOOL]);
    h.splice(1, 2, user("[context-keeper] compressed tool chain:\n- read(path=src/lease.ts) ref=toolu_o1@100#0"));
    h.push(user("Task 2: use"));
    const recovery = ask(model, h, [KEEPER_TOOL]);
    expect(recovery.toolCalls?.map((c) => [c.name, c.input])).toEqual([["keeper_recall", { ref: "toolu_o1@100#0", pattern: "settleLease" }]]);
    const rid = recovery.toolCalls![0]!.id!;
    h.push(assistantCalls([rid, "keeper_recall", recovery.toolCalls![0]!.input]), results([rid, `[keeper_recall ref=toolu_o1@100#0] 1 match\n${FACT} {`]));
    expect(ask(model, h, [KEEPER_TOOL]).toolCalls?.[0]?.id).toBe("toolu_p2");
    const r = model.report();
    expect(outcomeCounts(r)).toEqual({ context: 0, recalled: 1, "re-run": 0, lost: 0 });
    expect(r.recoverySeqs).toHaveLength(1);
    expect(r.recallResultChars).toBeGreaterThan(FACT.length);
  });

  test("without a pattern parameter: whole pages, following the next offset", () => {
    const model = createLookbackModel(scenario());
    const h = playPrompt1(model, [PAGE_TOOL]);
    h.splice(1, 2, user("- read(path=src/lease.ts) ref=toolu_o1@100#0"));
    h.push(user("Task 2: use"));
    const first = ask(model, h, [PAGE_TOOL]).toolCalls![0]!;
    expect(first.input).toEqual({ ref: "toolu_o1@100#0" });
    h.push(assistantCalls([first.id!, "keeper_recall", first.input]), results([first.id!, "[keeper_recall ref=toolu_o1@100#0] chars 0-5 of 9, next offset 5\nline\n"]));
    const second = ask(model, h, [PAGE_TOOL]).toolCalls![0]!;
    expect(second.input).toEqual({ ref: "toolu_o1@100#0", offset: 5 });
    expect(model.report().recallMisses).toBe(1);
  });

  test("no ref in the request: the original call runs again", () => {
    const model = createLookbackModel(scenario());
    const h = playPrompt1(model, [KEEPER_TOOL]);
    h.splice(1, 2);
    h.push(user("Task 2: use"));
    const rerun = ask(model, h, [KEEPER_TOOL]).toolCalls![0]!;
    expect([rerun.name, rerun.input]).toEqual(["read", { path: "src/lease.ts" }]);
    expect(rerun.id).not.toBe("toolu_o1");
    h.push(assistantCalls([rerun.id!, "read", rerun.input]), results([rerun.id!, FACT]));
    expect(ask(model, h, [KEEPER_TOOL]).toolCalls?.[0]?.id).toBe("toolu_p2");
    expect(outcomeCounts(model.report())["re-run"]).toBe(1);
  });

  test(`a fact that never comes back is lost after at most ${MAX_ATTEMPTS} recoveries, and the step goes on`, () => {
    const model = createLookbackModel(scenario());
    const h = playPrompt1(model, [KEEPER_TOOL]);
    h.splice(1, 2);
    h.push(user("Task 2: use"));
    let step = ask(model, h, [KEEPER_TOOL]);
    let rounds = 0;
    while (step.toolCalls?.[0]?.id !== "toolu_p2" && rounds < 10) {
      const c = step.toolCalls![0]!;
      h.push(assistantCalls([c.id!, c.name, c.input]), results([c.id!, "nothing useful"]));
      step = ask(model, h, [KEEPER_TOOL]);
      rounds++;
    }
    expect(rounds).toBeLessThanOrEqual(MAX_ATTEMPTS);
    expect(outcomeCounts(model.report()).lost).toBe(1);
  });
});
