import { describe, expect, test } from "bun:test";
import { digestBody } from "./body-digest.ts";
import { findPairingViolations } from "./pairing.ts";
import { cacheBodyOf, googleView, responsesView } from "./flatten.ts";

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
    expect(cacheBodyOf({ prompt: "hi" })).toBeUndefined();
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

  test("Codex: the tools of the leading additional_tools item are tools, the prompt after it the system; a later one stays in place", () => {
    const tools = [{ type: "function", name: "read", parameters: {} }, { type: "function", name: "bash", parameters: {} }];
    const [developer, ...rest] = responses().input;
    const added = { type: "additional_tools", role: "developer", tools: [{ type: "function", name: "mcp_x", parameters: {} }] };
    const view = responsesView({ input: [{ type: "additional_tools", role: "developer", tools }, developer, ...rest, added] });
    expect(view.tools).toEqual(tools as never);
    expect(view.system).toEqual([{ type: "text", text: "You are pi.", item: developer }] as never);
    expect(view.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect((view.messages[2]!.content as Array<Record<string, unknown>>).at(-1)).toMatchObject({ type: "text", item: added });
  });

  test("its digest sees a change to an old output from that message on, and nothing before it", () => {
    const first = digestBody(responsesView(responses()));
    expect(digestBody(responsesView(responses()), first).unchanged).toBe(3);
    expect(digestBody(responsesView(responses("[pruned]")), first).unchanged).toBe(2);
  });
});

/** A Google payload as pi-ai's google-generative-ai builds it (before @google/genai): `ids` as Gemini 3 gets them. */
function google(output = "file text", ids = true) {
  const id = (v: string) => (ids ? { id: v } : {});
  return {
    model: "gemini-3-flash-preview",
    contents: [
      { role: "user", parts: [{ text: "go" }] },
      {
        role: "model",
        parts: [
          { thought: true, text: "look" },
          { text: "Reading." },
          { functionCall: { name: "read", args: { path: "a" }, ...id("c1") }, thoughtSignature: "c2ln" },
          { functionCall: { name: "read", args: { path: "b" }, ...id("c2") } },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name: "read", response: { output }, ...id("c1") } }, { functionResponse: { name: "read", response: { error: "no b" }, ...id("c2") } }] },
      { role: "user", parts: [{ text: "next" }] },
    ],
    config: { systemInstruction: "You are pi.", tools: [{ functionDeclarations: [{ name: "read", parametersJsonSchema: {} }, { name: "bash" }] }], thinkingConfig: { includeThoughts: true } },
  };
}

describe("cacheBodyOf on a Google payload", () => {
  test("the system instruction as system, declarations as tools, one message per content, each part a block", () => {
    const view = googleView(google());
    expect(cacheBodyOf(google())).toEqual(view);
    expect(view.system).toEqual([{ type: "text", text: "You are pi." }] as never);
    expect(view.tools!.map((t) => t.name)).toEqual(["read", "bash"]);
    expect(view.messages.map((m) => [m.role, (m.content as Array<{ type: string }>).map((b) => b.type)])).toEqual([
      ["user", ["text"]],
      ["assistant", ["thinking", "text", "tool_use", "tool_use"]],
      ["user", ["tool_result", "tool_result"]],
      ["user", ["text"]],
    ]);
    const [thinking, , call] = view.messages[1]!.content as Array<Record<string, unknown>>;
    expect(thinking).toMatchObject({ thinking: "look", signature: "" });
    expect(call).toMatchObject({ id: "c1", name: "read", input: { path: "a" }, part: google().contents[1]!.parts[2] });
    expect((view.messages[2]!.content as Array<Record<string, unknown>>).map((b) => b.content)).toEqual(["file text", "no b"]);
    expect(findPairingViolations(view.messages)).toEqual([]);
  });

  test("without ids (Gemini 2.5) calls and responses pair by their place", () => {
    const view = googleView(google("x", false));
    expect((view.messages[1]!.content as Array<Record<string, unknown>>).filter((b) => b.type === "tool_use").map((b) => b.id)).toEqual(["1#0", "1#1"]);
    expect((view.messages[2]!.content as Array<Record<string, unknown>>).map((b) => b.tool_use_id)).toEqual(["1#0", "1#1"]);
    expect(findPairingViolations(view.messages)).toEqual([]);
  });

  test("its digest sees a change to an old response from that content on, and nothing before it", () => {
    const first = digestBody(googleView(google()));
    expect(digestBody(googleView(google()), first).unchanged).toBe(4);
    expect(digestBody(googleView(google("[pruned]")), first).unchanged).toBe(2);
  });
});
