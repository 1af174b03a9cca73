/**
 * Images in tool results, through the real pi CLI on a model that takes images: a `read` of a
 * PNG is answered, the flush prunes it (a stub, or a collapsed chain's line), and the model
 * recalls it. What the request carries after the flush says plainly that an image was left out
 * (never "27 bytes", the length of Pi's note beside the image), and `keeper_recall` gives the
 * image back as an image block, the very bytes the read returned.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import type { MainScript, WireBlock, WireMessage } from "../support/fake-anthropic/index.ts";
import { createPiWorkspace, runPi, type PiWorkspace } from "../support/pi-runner.ts";
import { blocksOf, CHAIN_HEAD, humanPromptText, STUB_HEAD, toolResultBlockText } from "./support/recall-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));

function crc32(bytes: Uint8Array): number {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

/** A `size`×`size` RGB PNG of a colour gradient. */
function png(size: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc(size * (1 + 3 * size));
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) rows.set([(x * 255) / size, (y * 255) / size, 128], y * (1 + 3 * size) + 1 + 3 * x);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}

const RECALL_PROMPT = "Look at the picture again.";
const IMAGE_MODEL = { input: ["text", "image"] as Array<"text" | "image"> };

/** Image blocks anywhere in the messages (tool results included). */
function imagesIn(messages: WireMessage[]): WireBlock[] {
  const out: WireBlock[] = [];
  for (const m of messages)
    for (const b of blocksOf(m)) {
      if (b.type === "image") out.push(b);
      if (b.type === "tool_result" && Array.isArray(b.content)) for (const c of b.content as WireBlock[]) if (c.type === "image") out.push(c);
    }
  return out;
}

/** What stands for the pruned read in a request: its stub, or its line of a collapsed chain, and the ref there. */
function prunedRead(messages: WireMessage[]): { text: string; ref: string } | undefined {
  for (const m of messages)
    for (const b of blocksOf(m)) {
      if (b.type === "tool_result" && toolResultBlockText(b).startsWith(STUB_HEAD)) {
        const text = toolResultBlockText(b);
        return { text, ref: /ref=(\S+?@-?\d+#\d+)/.exec(text)![1]! };
      }
      const text = String(b.text ?? "");
      if (b.type === "text" && text.startsWith(CHAIN_HEAD)) {
        const line = text.split("\n").find((l) => l.startsWith("- read("))!;
        return { text: line, ref: / ref=(\S+)$/.exec(line)![1]! };
      }
    }
  return undefined;
}

async function imageSession(contextKeeper: Record<string, unknown>) {
  const workspace = createPiWorkspace();
  workspaces.push(workspace);
  writeFileSync(join(workspace.cwd, "chart.png"), png(48));
  const first = [{ text: "Reading it.", toolCalls: [{ name: "read", input: { path: "chart.png" } }] }, { text: "A gradient." }];
  let cursor = 0;
  let recalled = false;
  const script: MainScript = ({ request }) => {
    const body = request.body;
    if (!humanPromptText(body).includes(RECALL_PROMPT)) return first[cursor++] ?? { text: "(script exhausted)" };
    const pruned = prunedRead(body.messages);
    if (!pruned || recalled) return { text: "Seen it again." };
    recalled = true;
    return { toolCalls: [{ name: "keeper_recall", input: { ref: pruned.ref } }] };
  };
  return runPi({ workspace, mode: "rpc", model: IMAGE_MODEL, contextKeeper: { summarizer: { mode: "extractive" }, ...contextKeeper }, script, prompts: ["What is in chart.png?", RECALL_PROMPT] });
}

function expectImageRecalled(run: Awaited<ReturnType<typeof imageSession>>) {
  expect(run.requests.filter((r) => r.status !== 200).map((r) => r.errorMessage)).toEqual([]);
  // The read's image went to the model with the read.
  const original = imagesIn(run.mainRequests[1]!.body.messages);
  expect(original).toHaveLength(1);
  // After the flush: pruned, and what stands for it says an image was left out and how to get it.
  const second = run.prompts[1]!.requests.find((r) => r.kind === "main")!;
  expect(imagesIn(second.body.messages)).toHaveLength(0);
  const pruned = prunedRead(second.body.messages)!;
  expect(pruned).toBeDefined();
  console.log(`[recall-image] ${pruned.text}`);
  expect(pruned.text).toContain("image/png");
  expect(pruned.text).toMatch(/image .*left out/);
  expect(pruned.text).not.toContain("27 bytes");
  // The recall brings the image back: the same bytes, as an image block of its tool result.
  const last = run.mainRequests.at(-1)!;
  const back = imagesIn(last.body.messages);
  expect(back).toHaveLength(1);
  expect(back[0]!.source).toEqual(original[0]!.source);
}

describe("an image in a tool result", () => {
  test("stubbed (chain compression off): the stub says the image was left out, recall returns it", async () => {
    const run = await imageSession({ pruning: { chainCompression: { enabled: false } } });
    expectImageRecalled(run);
  }, 120_000);

  test("in a collapsed chain: the call line says the image was left out, recall returns it", async () => {
    const run = await imageSession({});
    expectImageRecalled(run);
  }, 120_000);
});
