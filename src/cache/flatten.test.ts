import { describe, expect, test } from "bun:test";
import { digestBody } from "./body-digest.ts";
import { findPairingViolations } from "./pairing.ts";
import { cacheBodyOf, responsesView } from "./flatten.ts";

/** A Responses payload as pi-ai's openai-responses serializer builds it. */
function responses(output = "file text") {
  return {
    model: "gpt-5.2",
    input: [
      { role: "developer", content: "You are pi." },
      { role: "user", content: [{ type: "input_text", text: "go" }] },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "look" }], encrypted_content: "enc" },
      { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Reading.", annotations: [] }] },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "read", arguments: '{"path":"a"}' },
      { type: "function_call_output", call_id: "call_1", output },
      { role: "user", content: [{ type: "input_text", text: "next" }] },
    ],
    tools: [{ type: "function", name: "read", parameters: {} }],
    stream: true,
    store: false,
  };
}

describe("cacheBodyOf", () => {
  test("a body with messages is read as it is; a payload it cannot read is undefined", () => {
    const anthropic = { messages: [{ role: "user", content: "hi" }] };
    expect(cacheBodyOf(anthropic)).toBe(anthropic as never);
    expect(cacheBodyOf({ contents: [] })).toBeUndefined();
    expect(cacheBodyOf(null)).toBeUndefined();
  });

  test("a Responses payload: instructions as system, items grouped into messages, calls paired by call_id", () => {
    const view = responsesView(responses());
    expect(cacheBodyOf(responses())).toEqual(view);
    expect(view.system).toEqual([{ type: "text", text: "You are pi.", item: responses().input[0] }] as never);
    expect(view.messages.map((m) => [m.role, (m.content as Array<{ type: string }>).map((b) => b.type)])).toEqual([
      ["user", ["text"]],
      ["assistant", ["thinking", "text", "tool_use"]],
      ["user", ["tool_result", "text"]],
    ]);
    const call = (view.messages[1]!.content as Array<Record<string, unknown>>)[2]!;
    expect(call).toMatchObject({ id: "call_1", name: "read", input: { path: "a" } });
    expect(findPairingViolations(view.messages)).toEqual([]);
    expect(view.tools).toHaveLength(1);
  });

  test("its digest sees a change to an old output from that message on, and nothing before it", () => {
    const first = digestBody(responsesView(responses()));
    expect(digestBody(responsesView(responses()), first).unchanged).toBe(3);
    expect(digestBody(responsesView(responses("[pruned]")), first).unchanged).toBe(2);
  });
});
