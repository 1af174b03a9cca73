/**
 * A recorded request with the usage a test wants (the wire bench's unit tests): `usage` is
 * [uncached input, cache read, cache write, output]; a status other than 200 has no response.
 */
import type { RecordedRequest, WireMessage } from "../../test/support/fake-anthropic/types.ts";

export function recordedRequest(o: { seq?: number; kind: "main" | "side"; messages: WireMessage[]; usage: [number, number, number, number?]; status?: number }): RecordedRequest {
  const [input, read, write, output = 1] = o.usage;
  const status = o.status ?? 200;
  return {
    seq: o.seq ?? 0,
    kind: o.kind,
    kindIndex: 0,
    arrivedAtMs: 0,
    sinceStartMs: 0,
    url: "",
    headers: {},
    raw: "",
    body: { messages: o.messages },
    status,
    ...(status === 200
      ? { response: { messageId: "m", toolCalls: [], stopReason: "end_turn", usage: { input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: write, output_tokens: output } } }
      : {}),
  };
}
