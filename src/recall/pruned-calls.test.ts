import { describe, expect, test } from "bun:test";
import { offeredRefKeys, prunedCallsOf, purgedArgumentsOnlyKeys } from "./pruned-calls.ts";
import { emptyState } from "../state/schema.ts";
import { assistant, call, result, user } from "../../test/support/message-factory.ts";

describe("pruned calls", () => {
  // Found by the session fuzzer (test/fuzz/fixtures/purged-error-ref.json): a failed call too
  // small to summarize had its arguments purged, and the purge text's ref was never indexed.
  test("a failed call whose arguments are purged is indexed under the ref the purge text names", () => {
    const messages = [user("go", 1), assistant([call("t1", "bash", { command: "false" })], 2), result("t1", "bash", "exit code 1", 3, true)];
    const state = emptyState();
    state.frontier.purgedErrorKeys = ["t1@2#0"];
    expect([...offeredRefKeys(state)]).toEqual(["t1@2#0"]);
    const calls = prunedCallsOf(messages, state);
    expect(calls.map((c) => [c.occurrenceKey, c.resultText, c.isError])).toEqual([["t1@2#0", "exit code 1", true]]);
  });

  test("a purged call's ref stands for its arguments only while its output still shows", () => {
    const state = emptyState();
    state.frontier.purgedErrorKeys = ["t1@2#0", "t2@2#1"];
    state.frontier.stubbedKeys = ["t2@2#1"];
    expect([...purgedArgumentsOnlyKeys(state)]).toEqual(["t1@2#0"]);
  });

  test("calls the state neither hides nor purges are left out", () => {
    const messages = [user("go", 1), assistant([call("t1", "bash", { command: "ls" })], 2), result("t1", "bash", "a\nb", 3)];
    expect(prunedCallsOf(messages, emptyState())).toEqual([]);
  });
});
