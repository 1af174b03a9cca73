/**
 * Small text measurements shared by the summarizer and the recall store: UTF-8 byte
 * counts, line splitting, truncation with an ellipsis, content hashes.
 */
import { createHash } from "node:crypto";

/** UTF-8 length of a JS string (lone surrogates count 3 bytes, as the encoder writes U+FFFD). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Lines of a text; a trailing newline does not add an empty last line. Empty text has 0 lines. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export const ELLIPSIS = "…";

/** Cut `text` to at most `max` characters, marking the cut with an ellipsis. */
export function truncateWithEllipsis(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  if (isHighSurrogateAt(text, end - 1)) end -= 1;
  return text.slice(0, end) + ELLIPSIS;
}

export function isHighSurrogateAt(text: string, index: number): boolean {
  if (index < 0 || index >= text.length) return false;
  const c = text.charCodeAt(index);
  return c >= 0xd800 && c <= 0xdbff;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
