/**
 * A fake Anthropic Messages API on 127.0.0.1 (random port) for driving the real pi CLI.
 *
 * - `POST /v1/messages` (any query, e.g. `?beta=true`) → validated (see validate.ts; a violation
 *   is answered `400 {"type":"error","error":{"type":"invalid_request_error",…}}`), classified
 *   main/side (see classify.ts), answered from the main script or the side router as an SSE
 *   stream (see sse.ts) with usage from the prefix cache model (see usage-model.ts).
 * - Every request is recorded (raw text, parsed body, arrival time, status, what was emitted).
 * - Thinking is emitted only when the request enables thinking; its signature is
 *   `signThinking(text)` (signature.ts), so the server can later check it came back unaltered.
 * - A list script is consumed one step per *valid* main request; when it runs out, the server
 *   answers a text-only "script exhausted" turn and counts it (`exhaustedCount`).
 */
import { randomBytes } from "node:crypto";
import { classifyRequest, PI_SUMMARIZATION_PROMPT_START, systemText } from "./classify.ts";
import { signThinking } from "./signature.ts";
import { encodeSseEvents, errorBody } from "./sse.ts";
import type {
  EmittedResponse,
  MainScript,
  MainStep,
  RecordedRequest,
  RequestClassifier,
  ScriptContext,
  ScriptedError,
  SideAnswer,
  SideRouter,
  WireRequest,
  WireUsage,
} from "./types.ts";
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
};

export type FakeAnthropic = {
  readonly port: number;
  /** `http://127.0.0.1:PORT` — the `baseUrl` for models.json (no `/v1`). */
  readonly baseUrl: string;
  /** Every request, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  mainRequests(): RecordedRequest[];
  sideRequests(): RecordedRequest[];
  /** Requests answered with a non-200 status (400 violations and scripted errors). */
  rejected(): RecordedRequest[];
  /** Main steps left in a list script (0 for a function script). */
  remainingSteps(): number;
  /** Main requests answered with the fallback because the list script had run out. */
  exhaustedCount(): number;
  setScript(script: MainScript): void;
  /** Append steps to a list script. */
  pushSteps(...steps: MainStep[]): void;
  setSideRouter(router: SideRouter): void;
  setClassifier(classify: RequestClassifier): void;
  /** Resolves with the first recorded request matching `pred` (past or future); rejects on timeout. */
  waitForRequest(pred: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  stop(): Promise<void>;
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

const EXHAUSTED_STEP: MainStep = { text: "(fake-anthropic: main script exhausted)" };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorResponse(e: Pick<ScriptedError, "status" | "type" | "message">): Response {
  return new Response(errorBody(e), { status: e.status, headers: { "content-type": "application/json" } });
}

function thinkingEnabled(body: WireRequest): boolean {
  return body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
}

export function startFakeAnthropic(options: FakeAnthropicOptions = {}): FakeAnthropic {
  const startedAt = Date.now();
  const nonce = options.idNonce ?? randomBytes(4).toString("hex");
  const requests: RecordedRequest[] = [];
  const emittedByToolId = new Map<string, EmittedResponse>();
  const cache = new Map<string, CacheEntry>();
  const waiters = new Set<(r: RecordedRequest) => void>();
  let script: MainScript = options.script ?? [];
  let listCursor = 0;
  let exhausted = 0;
  let sideRouter: SideRouter = options.sideRouter ?? defaultSideRouter;
  let classify: RequestClassifier = options.classify ?? classifyRequest;
  let idCounter = 0;
  const counts = { main: 0, side: 0 };

  async function nextMainStep(ctx: ScriptContext): Promise<MainStep> {
    if (typeof script === "function") return script(ctx);
    if (listCursor < script.length) return script[listCursor++];
    exhausted++;
    return EXHAUSTED_STEP;
  }

  function emit(body: WireRequest, step: MainStep | SideAnswer, toolCalls: MainStep["toolCalls"], stopOverride?: string): EmittedResponse {
    const id = `${nonce}_${++idCounter}`;
    const thinking =
      step.thinking !== undefined && thinkingEnabled(body)
        ? { text: step.thinking, signature: signThinking(step.thinking, options.signatureSecret) }
        : undefined;
    const calls = (toolCalls ?? []).map((c, i) => ({ id: c.id ?? `toolu_${id}_${i}`, name: c.name, input: c.input }));
    const plan = planUsage({ body, cache, nowMs: Date.now(), minCacheableTokens: options.minCacheableTokens, tokenizer: options.tokenizer });
    for (const [k, v] of plan.store) cache.set(k, v);
    const outChars = (thinking?.text.length ?? 0) + (step.text?.length ?? 0) + calls.reduce((n, c) => n + JSON.stringify(c.input).length, 0);
    const usage: WireUsage = { ...plan.usage, output_tokens: Math.ceil(outChars / 4) + 1, ...step.usage };
    const emitted: EmittedResponse = {
      messageId: `msg_${id}`,
      thinking,
      text: step.text,
      toolCalls: calls,
      stopReason: stopOverride ?? (calls.length > 0 ? "tool_use" : "end_turn"),
      usage,
    };
    for (const c of calls) emittedByToolId.set(c.id, emitted);
    return emitted;
  }

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/v1/messages") {
      return errorResponse({ status: 404, type: "not_found_error", message: `${req.method} ${url.pathname} not found` });
    }
    const raw = await req.text();
    let body: WireRequest;
    try {
      body = JSON.parse(raw) as WireRequest;
    } catch {
      return errorResponse({ status: 400, type: "invalid_request_error", message: "request body is not valid JSON" });
    }
    const kind = classify(body);
    const now = Date.now();
    const record: RecordedRequest = {
      seq: requests.length,
      kind,
      kindIndex: counts[kind]++,
      arrivedAtMs: now,
      sinceStartMs: now - startedAt,
      url: req.url,
      headers: Object.fromEntries(req.headers),
      raw,
      body,
      status: 200,
    };
    requests.push(record);
    for (const w of [...waiters]) w(record);

    const violation =
      options.validate === false
        ? undefined
        : validateRequest(body, { signatureSecret: options.signatureSecret, emittedByToolId: (id) => emittedByToolId.get(id) });
    if (violation) {
      record.status = 400;
      record.errorMessage = violation;
      return errorResponse({ status: 400, type: "invalid_request_error", message: violation });
    }
    const ctx: ScriptContext = { request: record, kindIndex: record.kindIndex };
    const step: MainStep | SideAnswer = kind === "main" ? await nextMainStep(ctx) : await sideRouter(ctx);
    if (step.delayMs) await sleep(step.delayMs);
    if (step.error) {
      record.status = step.error.status;
      record.errorMessage = step.error.message;
      return errorResponse(step.error);
    }
    const toolCalls = "toolCalls" in step ? step.toolCalls : undefined;
    const stopOverride = "stopReason" in step ? step.stopReason : undefined;
    const emitted = emit(body, step, toolCalls, stopOverride);
    record.response = emitted;
    const events = encodeSseEvents(emitted, body.model ?? "fake-model");
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const e of events) controller.enqueue(encoder.encode(e));
        controller.close();
      },
    });
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_${emitted.messageId}` },
    });
  }

  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 255, fetch: handle });
  const port = server.port as number;

  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    mainRequests: () => requests.filter((r) => r.kind === "main"),
    sideRequests: () => requests.filter((r) => r.kind === "side"),
    rejected: () => requests.filter((r) => r.status !== 200),
    remainingSteps: () => (typeof script === "function" ? 0 : script.length - listCursor),
    exhaustedCount: () => exhausted,
    setScript(s) {
      script = s;
      listCursor = 0;
    },
    pushSteps(...steps) {
      if (typeof script === "function") throw new Error("pushSteps needs a list script");
      script = [...script, ...steps];
    },
    setSideRouter(r) {
      sideRouter = r;
    },
    setClassifier(c) {
      classify = c;
    },
    waitForRequest(pred, timeoutMs = 30_000) {
      const found = requests.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(onRequest);
          reject(new Error(`fake-anthropic: no matching request within ${timeoutMs} ms`));
        }, timeoutMs);
        const onRequest = (r: RecordedRequest) => {
          if (!pred(r)) return;
          clearTimeout(timer);
          waiters.delete(onRequest);
          resolve(r);
        };
        waiters.add(onRequest);
      });
    },
    async stop() {
      for (const w of waiters) waiters.delete(w);
      await server.stop(true);
    },
  };
}
