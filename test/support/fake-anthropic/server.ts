/**
 * A fake Anthropic Messages API on 127.0.0.1 (random port) for driving the real pi CLI, on the
 * shared fake server (`../fake-core.ts`: recording, scripts, side router).
 *
 * - `POST /v1/messages` (any query, e.g. `?beta=true`) → the thread it continues, if any, stood
 *   for its full request (see threads.ts), validated (see validate.ts; a violation is answered
 *   `400 {"type":"error","error":{"type":"invalid_request_error",…}}`), classified main/side (see
 *   classify.ts), answered from the main script or the side router as an SSE stream (see sse.ts)
 *   with usage from the prefix cache model (see usage-model.ts).
 * - Thinking is emitted only when the request enables thinking; its signature is
 *   `signThinking(text)` (signature.ts), so the server can later check it came back unaltered.
 * - With `thinking.block_binding: drop_block` (managed-effort models) a thinking block whose
 *   earlier conversation changed is dropped and reported in `message_start`'s
 *   `input_transformations` (binding.ts).
 */
import { createBindingStore } from "./binding.ts";
import { classifyRequest, PI_SUMMARIZATION_PROMPT_START, systemText } from "./classify.ts";
import { idNonceOf, startFakeServer, type Dialect, type FakeServer, type Refusal } from "../fake-core.ts";
import { signThinking } from "./signature.ts";
import { encodeSseEvents, errorBody } from "./sse.ts";
import { createThreadStore, type ThreadOptions, type ThreadStore, type ThreadUse } from "./threads.ts";
import type { EmittedResponse, MainScript, MainStep, RecordedRequest, RequestClassifier, SideAnswer, SideRouter, WireRequest, WireUsage } from "./types.ts";
import { planUsage, type CacheEntry } from "./usage-model.ts";
import { validateRequest } from "./validate.ts";

export type FakeAnthropicOptions = {
  script?: MainScript;
  sideRouter?: SideRouter;
  classify?: RequestClassifier;
  signatureSecret?: string;
  /** Fixed part of generated tool ids; random per server by default. Fix it to compare two runs byte for byte. */
  idNonce?: string;
  /** Passed to the usage model (default 1024). */
  minCacheableTokens?: number;
  /** Passed to the usage model: how a message block is counted (default "json"). */
  tokenizer?: "json" | "text";
  /** Set false to answer everything without the 400 checks (default true). */
  validate?: boolean;
  /** Message threads: how the server answers `thread` requests (see threads.ts). */
  threads?: ThreadOptions;
  /**
   * The provider's clock for cache and thread lifetimes (default `Date.now`): a virtual clock
   * lets a test run a session that lasts hours on the provider's side in seconds, without timing.
   */
  clock?: () => number;
};

export type FakeAnthropic = FakeServer<WireRequest, EmittedResponse, RecordedRequest> & {
  /** The server's message threads (expire them to make the next continue `thread_not_found`). */
  readonly threads: Pick<ThreadStore, "expireAll" | "openCount">;
};

/** Default side answer: a Pi-shaped summary for Pi's compaction prompt, a plain text otherwise. */
export const defaultSideRouter: SideRouter = ({ request, kindIndex }) => {
  if (systemText(request.body).includes(PI_SUMMARIZATION_PROMPT_START)) {
    return {
      text: `## Goal\nScripted compaction summary #${kindIndex}.\n\n## Progress\n### Done\n- [x] earlier work\n\n## Next Steps\n1. continue`,
    };
  }
  return { text: `Scripted side answer #${kindIndex}.` };
};

function thinkingEnabled(body: WireRequest): boolean {
  return body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
}

function anthropicDialect(options: FakeAnthropicOptions, threads: ThreadStore): Dialect<WireRequest, EmittedResponse> {
  const nonce = idNonceOf(options.idNonce);
  const emittedByToolId = new Map<string, EmittedResponse>();
  const cache = new Map<string, CacheEntry>();
  const uses = new WeakMap<WireRequest, ThreadUse>();
  const binding = createBindingStore();
  let idCounter = 0;
  return {
    api: "anthropic-messages",
    paths: ["/v1/messages"],
    classify: classifyRequest,
    isRequest: (parsed): parsed is WireRequest => typeof parsed === "object" && parsed !== null && !Array.isArray(parsed),
    admit(body, headers) {
      const threaded = threads.admit(body, headers);
      if ("refusal" in threaded) return threaded;
      const violation =
        options.validate === false
          ? undefined
          : validateRequest(threaded.effective, { signatureSecret: options.signatureSecret, emittedByToolId: (id) => emittedByToolId.get(id) });
      if (violation) {
        threads.answered(threaded.effective, undefined);
        const refusal: Refusal = { status: 400, type: "invalid_request_error", message: violation };
        return { refusal };
      }
      if (threaded.use) uses.set(threaded.effective, threaded.use);
      return { effective: threaded.effective };
    },
    emit(body, step: MainStep | SideAnswer, record) {
      const id = `${nonce}_${++idCounter}`;
      const thinking =
        step.thinking !== undefined && thinkingEnabled(body) ? { text: step.thinking, signature: signThinking(step.thinking, options.signatureSecret) } : undefined;
      const toolCalls = "toolCalls" in step ? step.toolCalls : undefined;
      const calls = (toolCalls ?? []).map((c, i) => ({ id: c.id ?? `toolu_${id}_${i}`, name: c.name, input: c.input }));
      const plan = planUsage({ body, cache, nowMs: (options.clock ?? Date.now)(), minCacheableTokens: options.minCacheableTokens, tokenizer: options.tokenizer });
      for (const [k, v] of plan.store) cache.set(k, v);
      const outChars = (thinking?.text.length ?? 0) + (step.text?.length ?? 0) + calls.reduce((n, c) => n + JSON.stringify(c.input).length, 0);
      const usage: WireUsage = { ...plan.usage, output_tokens: Math.ceil(outChars / 4) + 1, ...step.usage };
      const stopOverride = "stopReason" in step ? step.stopReason : undefined;
      const dropped = binding.dropped(body);
      if (thinking) binding.bind(body, thinking.signature);
      const emitted: EmittedResponse = {
        ...(dropped.length > 0 ? { inputTransformations: dropped } : {}),
        messageId: `msg_${id}`,
        thinking,
        text: step.text,
        toolCalls: calls,
        stopReason: stopOverride ?? (calls.length > 0 ? "tool_use" : "end_turn"),
        usage,
      };
      for (const c of calls) emittedByToolId.set(c.id, emitted);
      const use = uses.get(body);
      if (use) (record as RecordedRequest).thread = use;
      return emitted;
    },
    encode: (emitted, body) => encodeSseEvents(emitted, body.model ?? "fake-model"),
    errorBody,
    onAnswered: (body, emitted) => threads.answered(body, emitted),
    streamHeaders: (emitted) => ({ "request-id": `req_${emitted.messageId}` }),
  };
}

export function startFakeAnthropic(options: FakeAnthropicOptions = {}): FakeAnthropic {
  const threads = createThreadStore({ ...options.threads, ...(options.clock ? { clock: options.clock } : {}) });
  const server = startFakeServer<WireRequest, EmittedResponse, RecordedRequest>(anthropicDialect(options, threads), {
    script: options.script,
    sideRouter: options.sideRouter ?? defaultSideRouter,
    classify: options.classify,
  });
  return Object.assign(server, { threads: { expireAll: threads.expireAll, openCount: threads.openCount } });
}
