/**
 * The part every fake provider server shares: an HTTP server on 127.0.0.1 (random port) that
 * records every request, classifies it main/side, asks its dialect (Anthropic Messages, OpenAI
 * Responses, Chat Completions) whether the provider would accept it, answers main requests from a
 * scripted list (one step per accepted main request) or function and side requests from a router,
 * and streams the dialect's SSE.
 *
 * - A refusal is answered with its status and the dialect's error body, and recorded (`status`,
 *   `errorMessage`). A step's `error` is answered the same way.
 * - A list script that runs out answers a text-only "script exhausted" turn and counts it.
 * - `effectiveBody` is what the provider acts on: the body as sent, or, for a request that
 *   continues a server-side thread, the full request the thread stands for.
 * - A body sent with `content-encoding: zstd` (Codex compresses its requests) is decompressed.
 * - A dialect with a `socket` also takes requests as messages on a WebSocket at its paths (Codex):
 *   each message is recorded and answered like a POST, its answer sent as messages; the
 *   connection's own state (a `channel` object, one per socket) goes to `admit` and `onAnswered`.
 */
import { randomBytes } from "node:crypto";
import { zstdDecompressSync } from "node:zlib";
import type { MainStep, RequestKind, ScriptedError, SideAnswer } from "./fake-anthropic/types.ts";

/** A provider's answer instead of a stream: HTTP status, error type, message, and the provider's extra fields. */
export type Refusal = ScriptedError & { code?: string | null; param?: string | null; details?: Record<string, unknown> };

export type FakeRecord<Body, Emitted> = {
  /** 0-based arrival index over all requests. */
  seq: number;
  kind: RequestKind;
  /** 0-based index among requests of the same kind. */
  kindIndex: number;
  arrivedAtMs: number;
  sinceStartMs: number;
  url: string;
  /** The request's headers (for a WebSocket message: the upgrade request's). */
  headers: Record<string, string>;
  /** An HTTP POST, or a message on a WebSocket (the core always sets it). */
  transport?: "http" | "websocket";
  raw: string;
  /** The body as sent. */
  body: Body;
  /** The body the server acted on (the full request behind a thread continuation); set once admitted. */
  effectiveBody?: Body;
  status: number;
  errorMessage?: string;
  /** The error code of a refusal (OpenAI's `code`, Anthropic's `details.error_code`). */
  errorCode?: string;
  response?: Emitted;
};

export type FakeContext<R> = { request: R; kindIndex: number };
export type FakeScript<R> = MainStep[] | ((ctx: FakeContext<R>) => MainStep | Promise<MainStep>);
export type FakeSideRouter<R> = (ctx: FakeContext<R>) => SideAnswer | Promise<SideAnswer>;

/** What one provider's wire format adds to the shared server. */
export interface Dialect<Body, Emitted> {
  /** Pi's `api` for this wire format. */
  readonly api: string;
  /** The POST paths the provider serves (a pattern for a path that carries the model, as Google's does). */
  readonly paths: readonly (string | RegExp)[];
  classify(body: Body): RequestKind;
  /** Whether the parsed JSON can be read as a request at all (else a 400, not recorded). */
  isRequest(parsed: unknown): parsed is Body;
  /**
   * The body to act on, or the refusal the provider answers (validation included); `url` is the
   * request's, `channel` the WebSocket connection's state (undefined over HTTP).
   */
  admit(body: Body, headers: Headers, url: URL, channel?: Channel): { effective: Body } | { refusal: Refusal };
  /** The turn the server streams for `step` (ids, usage, and any server-side state it keeps). */
  emit(effective: Body, step: MainStep | SideAnswer, record: FakeRecord<Body, Emitted>): Emitted;
  /** The SSE events of `emitted`, one string per event. */
  encode(emitted: Emitted, effective: Body): string[];
  errorBody(e: Refusal): string;
  /** Called once an admitted request is answered: with the streamed turn, or undefined after a scripted error. */
  onAnswered?(effective: Body, emitted: Emitted | undefined, channel?: Channel): void;
  /** Headers of a streamed answer beyond the content type. */
  streamHeaders?(emitted: Emitted): Record<string, string>;
  /** Requests as WebSocket messages too (see the module comment). */
  socket?: {
    readonly paths: readonly (string | RegExp)[];
    /** The request a message carries, or undefined when it carries none (answered with `errorFrame`). */
    requestOf(message: unknown): Body | undefined;
    /** The messages of an answer, in order. */
    frames(emitted: Emitted, effective: Body): string[];
    errorFrame(e: Refusal): string;
  };
}

/** One WebSocket connection's state, kept by the dialect. */
export type Channel = Record<string, unknown>;

export type FakeServer<Body, Emitted, Rec extends FakeRecord<Body, Emitted> = FakeRecord<Body, Emitted>> = {
  readonly port: number;
  /** `http://127.0.0.1:PORT`. */
  readonly baseUrl: string;
  /** Pi's `api` this server speaks. */
  readonly api: string;
  /** Every request, in arrival order. */
  readonly requests: readonly Rec[];
  mainRequests(): Rec[];
  sideRequests(): Rec[];
  /** Requests answered with a non-200 status (refusals and scripted errors). */
  rejected(): Rec[];
  /** Main steps left in a list script (0 for a function script). */
  remainingSteps(): number;
  /** Main requests answered with the fallback because the list script had run out. */
  exhaustedCount(): number;
  setScript(script: FakeScript<Rec>): void;
  pushSteps(...steps: MainStep[]): void;
  setSideRouter(router: FakeSideRouter<Rec>): void;
  setClassifier(classify: (body: Body) => RequestKind): void;
  /** Resolves with the first recorded request matching `pred` (past or future); rejects on timeout. */
  waitForRequest(pred: (r: Rec) => boolean, timeoutMs?: number): Promise<Rec>;
  stop(): Promise<void>;
};

const EXHAUSTED_STEP: MainStep = { text: "(fake server: main script exhausted)" };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The first value that occurs twice (the fakes' duplicate-id rules). */
export function firstDuplicate(values: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) return v;
    seen.add(v);
  }
  return undefined;
}

/** A fixed part for generated ids (random per server unless fixed, to compare two runs byte for byte). */
export function idNonceOf(fixed?: string): string {
  return fixed ?? randomBytes(4).toString("hex");
}

export function startFakeServer<Body, Emitted, Rec extends FakeRecord<Body, Emitted> = FakeRecord<Body, Emitted>>(
  dialect: Dialect<Body, Emitted>,
  options: { script?: FakeScript<Rec>; sideRouter: FakeSideRouter<Rec>; classify?: (body: Body) => RequestKind },
): FakeServer<Body, Emitted, Rec> {
  const startedAt = Date.now();
  const requests: Rec[] = [];
  const waiters = new Set<(r: Rec) => void>();
  let script: FakeScript<Rec> = options.script ?? [];
  let listCursor = 0;
  let exhausted = 0;
  let sideRouter = options.sideRouter;
  let classify = options.classify ?? ((b: Body) => dialect.classify(b));
  const counts = { main: 0, side: 0 };

  async function nextMainStep(ctx: FakeContext<Rec>): Promise<MainStep> {
    if (typeof script === "function") return script(ctx);
    if (listCursor < script.length) return script[listCursor++]!;
    exhausted++;
    return EXHAUSTED_STEP;
  }

  function refuse(rec: Rec | undefined, e: Refusal): Response {
    record(rec, e);
    return new Response(dialect.errorBody(e), { status: e.status, headers: { "content-type": "application/json" } });
  }

  const matches = (paths: readonly (string | RegExp)[], pathname: string) => paths.some((p) => (typeof p === "string" ? p === pathname : p.test(pathname)));

  type Received = { record?: Rec; refusal: Refusal } | { record: Rec; emitted: Emitted; effective: Body };

  /** Records one request, admits it, and answers it from the script or the router. */
  async function receive(body: Body, raw: string, url: URL, headers: Headers, transport: "http" | "websocket", channel?: Channel): Promise<Received> {
    // A continuation carries only the new messages: it is classified by the request it stands for.
    const admitted = dialect.admit(body, headers, url, channel);
    const kind = classify("effective" in admitted ? admitted.effective : body);
    const now = Date.now();
    const record = {
      seq: requests.length,
      kind,
      kindIndex: counts[kind]++,
      arrivedAtMs: now,
      sinceStartMs: now - startedAt,
      url: url.toString(),
      headers: Object.fromEntries(headers),
      transport,
      raw,
      body,
      status: 200,
    } as Rec;
    requests.push(record);
    for (const w of [...waiters]) w(record);

    if ("refusal" in admitted) return { record, refusal: admitted.refusal };
    record.effectiveBody = admitted.effective;
    const ctx: FakeContext<Rec> = { request: record, kindIndex: record.kindIndex };
    const step: MainStep | SideAnswer = kind === "main" ? await nextMainStep(ctx) : await sideRouter(ctx);
    if (step.delayMs) await sleep(step.delayMs);
    if (step.error) {
      dialect.onAnswered?.(admitted.effective, undefined, channel);
      return { record, refusal: step.error };
    }
    const emitted = dialect.emit(admitted.effective, step, record);
    record.response = emitted;
    dialect.onAnswered?.(admitted.effective, emitted, channel);
    return { record, emitted, effective: admitted.effective };
  }

  function record(rec: Rec | undefined, e: Refusal): void {
    if (!rec) return;
    rec.status = e.status;
    rec.errorMessage = e.message;
    const code = e.code ?? (e.details?.error_code as string | undefined);
    if (code) rec.errorCode = code;
  }

  function parse(raw: string): { body: Body } | { refusal: Refusal } {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return { refusal: { status: 400, type: "invalid_request_error", message: "request body is not valid JSON" } };
    }
    return dialect.isRequest(parsed) ? { body: parsed } : { refusal: { status: 400, type: "invalid_request_error", message: "the request body is not a JSON object" } };
  }

  type SocketData = { url: URL; headers: Headers; channel: Channel; queue: Promise<void> };
  type Socket = import("bun").ServerWebSocket<SocketData>;

  async function handle(req: Request, srv: import("bun").Server<SocketData>): Promise<Response | undefined> {
    const url = new URL(req.url);
    if (dialect.socket && req.headers.get("upgrade")?.toLowerCase() === "websocket" && matches(dialect.socket.paths, url.pathname)) {
      if (srv.upgrade(req, { data: { url, headers: req.headers, channel: {}, queue: Promise.resolve() } })) return undefined;
    }
    if (req.method !== "POST" || !matches(dialect.paths, url.pathname)) {
      return refuse(undefined, { status: 404, type: "not_found_error", message: `${req.method} ${url.pathname} not found` });
    }
    const bytes = new Uint8Array(await req.arrayBuffer());
    const raw = new TextDecoder().decode(req.headers.get("content-encoding") === "zstd" ? zstdDecompressSync(bytes) : bytes);
    const parsed = parse(raw);
    if ("refusal" in parsed) return refuse(undefined, parsed.refusal);
    const got = await receive(parsed.body, raw, url, req.headers, "http");
    if ("refusal" in got) return refuse(got.record, got.refusal);
    const events = dialect.encode(got.emitted, got.effective);
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const e of events) controller.enqueue(encoder.encode(e));
        controller.close();
      },
    });
    return new Response(stream, {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...dialect.streamHeaders?.(got.emitted) },
    });
  }

  /** One WebSocket message: answered in arrival order on its connection. */
  async function onMessage(ws: Socket, message: string | Buffer): Promise<void> {
    const socket = dialect.socket!;
    const raw = typeof message === "string" ? message : new TextDecoder().decode(message);
    let parsedMessage: unknown;
    try {
      parsedMessage = JSON.parse(raw);
    } catch {
      parsedMessage = undefined;
    }
    const request = socket.requestOf(parsedMessage);
    if (request === undefined || !dialect.isRequest(request)) {
      ws.send(socket.errorFrame({ status: 400, type: "invalid_request_error", message: "the message is not a request" }));
      return;
    }
    const got = await receive(request, raw, ws.data.url, ws.data.headers, "websocket", ws.data.channel);
    if ("refusal" in got) {
      record(got.record, got.refusal);
      ws.send(socket.errorFrame(got.refusal));
      return;
    }
    for (const frame of socket.frames(got.emitted, got.effective)) ws.send(frame);
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 255,
    fetch: handle,
    websocket: {
      message(ws: Socket, message: string | Buffer) {
        ws.data.queue = ws.data.queue.then(() => onMessage(ws, message));
      },
    },
  });
  const port = server.port as number;

  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    api: dialect.api,
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
          reject(new Error(`fake server: no matching request within ${timeoutMs} ms`));
        }, timeoutMs);
        const onRequest = (r: Rec) => {
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
