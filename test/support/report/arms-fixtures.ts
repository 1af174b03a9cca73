/** A synthetic Pi session file (v3) for the arm and CLI tests. */
import type { AgentMessage } from "@earendil-works/pi-agent-core";

const usage = (input: number, cacheRead: number, cacheWrite: number, output = 20) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  totalTokens: input + cacheRead + cacheWrite + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

export interface SyntheticSessionOptions {
  prompts: number;
  /** Tool calls per prompt (each a `read` returning `outputChars` characters). */
  callsPerPrompt: number;
  outputChars: number;
  model?: string;
  /** Start time (ms); requests are 10 s apart. */
  start?: number;
  thinking?: boolean;
}

/** The session's JSONL text: every assistant message carries non-zero usage so it replays. */
export function syntheticSession(o: SyntheticSessionOptions): string {
  const model = o.model ?? "claude-sonnet-4-5";
  const lines: string[] = [JSON.stringify({ type: "session", version: 3, id: "synthetic", timestamp: "2025-01-01T00:00:00Z", cwd: "/p" })];
  let t = o.start ?? 1_700_000_000_000;
  let parent: string | null = null;
  let n = 0;
  const push = (message: AgentMessage) => {
    const id = `e${++n}`;
    lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date(t).toISOString(), message }));
    parent = id;
  };
  const assistant = (content: unknown[], stopReason: string) =>
    ({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model, usage: usage(10, 1000, 500), stopReason, timestamp: (t += 10_000) }) as unknown as AgentMessage;
  for (let p = 0; p < o.prompts; p++) {
    push({ role: "user", content: [{ type: "text", text: `prompt ${p}: please look at the files` }], timestamp: (t += 1000) } as AgentMessage);
    for (let c = 0; c < o.callsPerPrompt; c++) {
      const id = `call_${p}_${c}`;
      const think = o.thinking ? [{ type: "thinking", thinking: `reasoning ${p}.${c} `.repeat(40), thinkingSignature: `sig${p}${c}` }] : [];
      push(assistant([...think, { type: "toolCall", id, name: "read", arguments: { path: `src/file-${p}-${c}.ts` } }], "toolUse"));
      const body = Array.from({ length: Math.ceil(o.outputChars / 40) }, (_, i) => `line ${i} of file ${p}-${c} ........`.slice(0, 39)).join("\n").slice(0, o.outputChars);
      push({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: body }], isError: false, timestamp: (t += 500) } as AgentMessage);
    }
    const think = o.thinking ? [{ type: "thinking", thinking: `final reasoning ${p} `.repeat(40), thinkingSignature: `sigf${p}` }] : [];
    push(assistant([...think, { type: "text", text: `done with prompt ${p}` }], "stop"));
  }
  return `${lines.join("\n")}\n`;
}
