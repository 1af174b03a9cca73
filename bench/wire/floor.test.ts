import { describe, expect, test } from "bun:test";
import type { RecordedRequest, WireMessage } from "../../test/support/fake-anthropic/types.ts";
import { recordedRequest } from "./recorded-request.ts";
import { carriedHistoryCost } from "./floor.ts";
import { measureRun } from "./measure.ts";
import { formatTable, rowsOf } from "./table.ts";

function req(kind: "main" | "side", messages: WireMessage[], usage: [number, number, number]): RecordedRequest {
  return recordedRequest({ kind, messages, usage });
}
const prompt: WireMessage = { role: "user", content: [{ type: "text", text: "Task" }] };
const result: WireMessage = { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "x" }] };
const call: WireMessage = { role: "assistant", content: [{ type: "tool_use", id: "a", name: "read", input: {} }] };

describe("cost floor with tool loops untouched", () => {
  test("nothing carried in a single prompt: the floor is the cost", () => {
    const run = [req("main", [prompt], [0, 0, 1000]), req("main", [prompt, call, result], [0, 1000, 400])];
    expect(carriedHistoryCost(run)).toBe(0);
  });

  test("history carried into a later prompt leaves its writes first, then its reads, and every later read of the loop", () => {
    const run = [
      req("main", [prompt], [0, 0, 1000]),
      req("main", [prompt, call, result], [0, 1000, 400]),
      // second prompt: 1000 + 700 carried, 300 of them rewritten, 400 read from the cache
      req("main", [prompt, call, result, prompt], [0, 1400, 300]),
      req("main", [prompt, call, result, prompt, call, result], [0, 1700, 200]),
      req("side", [prompt], [5000, 0, 0]),
    ];
    // prompt start: 300 writes + 400 reads; the loop step after it: 700 reads
    expect(carriedHistoryCost(run)).toBeCloseTo(1.25 * 300 + 0.1 * 400 + 0.1 * 700, 9);
    expect(measureRun(run).carriedHistoryCost).toBeCloseTo(carriedHistoryCost(run), 9);
  });

  test("a prompt start smaller than the first request carries nothing; a later loop step saves no more than it reads", () => {
    const run = [
      req("main", [prompt], [0, 0, 1000]),
      req("main", [prompt, call, result, prompt], [0, 0, 1500]), // carried 500, all written again
      req("main", [prompt, call, result, prompt, call, result], [100, 200, 300]), // reads only 200 of it
      req("main", [prompt, call, result, prompt, call, result, prompt], [0, 900, 0]), // below the first: 0
      req("main", [prompt, call, result, prompt, call, result, prompt, call, result], [0, 900, 50]),
    ];
    expect(carriedHistoryCost(run)).toBeCloseTo(1.25 * 500 + 0.1 * 200, 9);
  });

  test("the table shows the floor as a ratio to the same seed's bare arm", () => {
    const bare = measureRun([req("main", [prompt], [0, 0, 1000])]);
    const keeper = { ...bare, cost: 500, carriedHistoryCost: 100 };
    const results = [
      { seed: 1, arm: "bare", measure: bare },
      { seed: 1, arm: "keeper", measure: keeper },
    ];
    expect(rowsOf(results)[1].floorVsBare).toBeCloseTo(400 / 1250, 9);
    expect(formatTable(results)).toContain("| 1 | keeper | 0.400 | – | 0.320 |");
  });
});
