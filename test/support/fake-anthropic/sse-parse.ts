/** Minimal SSE parser for tests that read the fake server's stream directly. */
export type SseEvent = { event: string; data: Record<string, unknown> };

export function parseSseStream(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const frame of text.split("\n\n")) {
    if (!frame.trim()) continue;
    let event = "message";
    let data = "";
    for (const line of frame.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    out.push({ event, data: data ? (JSON.parse(data) as Record<string, unknown>) : {} });
  }
  return out;
}
