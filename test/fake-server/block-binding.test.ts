/**
 * Thinking bound to its prefix on the fake Anthropic server (binding.ts), driven by pi-ai's own
 * client with a managed-effort model (`compat.supportsMidConvoEffort`: pi-ai sends
 * `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`): an edit of earlier history
 * drops every later thinking block, the server reports it in `input_transformations`, and pi-ai
 * records it as an `anthropic_input_transformations` diagnostic on the assistant message.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { AssistantMessage, Message } from "@earendil-works/pi-ai";
import { startFakeAnthropic, type FakeAnthropic, type MainStep } from "../support/fake-anthropic/index.ts";
import { callsOf, toolResultFor, transcript, turn, user } from "./pi-ai-client.ts";

const MANAGED = { supportsMidConvoEffort: true, supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true, forceAdaptiveThinking: true };
const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

const loop: MainStep[] = [
  { thinking: "read a first", toolCalls: [{ name: "read", input: { path: "a" } }] },
  { thinking: "then b", toolCalls: [{ name: "read", input: { path: "b" } }] },
  { thinking: "and c", toolCalls: [{ name: "read", input: { path: "c" } }] },
  { thinking: "all read", text: "Done." },
];

type Diagnostic = { type: string; details?: { transformations?: Array<{ type?: string; path?: string; reason?: string }> } };
const droppedOf = (m: AssistantMessage) => ((m as { diagnostics?: Diagnostic[] }).diagnostics ?? []).filter((d) => d.type === "anthropic_input_transformations").flatMap((d) => d.details?.transformations ?? []);

/** The loop through pi-ai; `edit(messages, i)` may change the transcript before request i. */
async function run(compat: Record<string, unknown> | undefined, edit?: (messages: Message[], i: number) => Message[]) {
  const s = startFakeAnthropic({ script: loop, idNonce: "bb" });
  servers.push(s);
  let messages: Message[] = [user("read a, b and c")];
  const replies: AssistantMessage[] = [];
  for (let i = 0; i < loop.length; i++) {
    if (edit) messages = edit(messages, i);
    const reply = await turn("anthropic-messages", s.baseUrl, transcript(messages), { compat, modelId: "claude-opus-5" });
    expect(reply.stopReason).not.toBe("error");
    replies.push(reply);
    messages.push(reply, ...callsOf(reply).map((c) => toolResultFor(c, `contents of ${c.id}`)));
  }
  return { s, replies };
}

describe("block binding (drop_block)", () => {
  test("pi-ai asks for it on a managed-effort model; with history unchanged nothing is dropped", async () => {
    const { s, replies } = await run(MANAGED);
    expect((s.requests[0]!.body.thinking as { block_binding?: unknown }).block_binding).toEqual({ prefix_mismatch_behavior: "drop_block" });
    expect(replies.flatMap(droppedOf)).toEqual([]);
    expect(s.requests.every((r) => r.response?.inputTransformations === undefined)).toBe(true);
  });

  test("an edit of the first tool result drops every later thinking block; pi-ai records each as thinking_dropped", async () => {
    // Before the last request, the first result is stubbed (what a pruning flush does).
    const { s, replies } = await run(MANAGED, (messages, i) =>
      i === 3 ? messages.map((m, k) => (k === 2 ? { ...(m as object), content: [{ type: "text", text: "[pruned]" }] } as Message : m)) : messages,
    );
    expect(replies.slice(0, 3).flatMap(droppedOf)).toEqual([]);
    const dropped = droppedOf(replies[3]!);
    // The thinking of the 2nd and 3rd answers (after the edit) is dropped; the 1st answer's (before it) is kept.
    expect(dropped.map((t) => t.type)).toEqual(["thinking_dropped", "thinking_dropped"]);
    expect(dropped.every((t) => t.reason === "prefix_mismatch")).toBe(true);
    const paths = dropped.map((t) => Number(/^messages\.(\d+)\./.exec(t.path ?? "")?.[1]));
    const body = s.requests[3]!.body.messages;
    expect(paths.every((p) => body[p]?.role === "assistant")).toBe(true);
    const edited = body.findIndex((m) => JSON.stringify(m).includes("[pruned]"));
    expect(paths.every((p) => p > edited)).toBe(true);
  });

  test("a model without bound thinking (no managed effort): no block_binding, nothing dropped after the same edit", async () => {
    const { s, replies } = await run(undefined, (messages, i) =>
      i === 3 ? messages.map((m, k) => (k === 2 ? { ...(m as object), content: [{ type: "text", text: "[pruned]" }] } as Message : m)) : messages,
    );
    expect((s.requests[0]!.body.thinking as { block_binding?: unknown }).block_binding).toBeUndefined();
    expect(replies.flatMap(droppedOf)).toEqual([]);
  });
});
