/** Pages of an original in characters (JS string units), never splitting a surrogate pair. */
import { isHighSurrogateAt, utf8ByteLength } from "../summarize/text-measure.ts";

export const DEFAULT_PAGE_CHARS = 20_000;

export interface TextPage {
  start: number;
  end: number;
  text: string;
  totalChars: number;
  /** UTF-8 byte offsets of the page within the original. */
  startByte: number;
  endByte: number;
  totalBytes: number;
  /** Where the next page starts; undefined on the last page. */
  nextOffset: number | undefined;
}

export function pageOf(original: string, offset = 0, limit = DEFAULT_PAGE_CHARS): TextPage {
  const total = original.length;
  let start = Math.min(Math.max(0, Math.floor(offset)), total);
  if (start > 0 && start < total && isHighSurrogateAt(original, start - 1)) start -= 1; // offset inside a pair
  let end = Math.min(total, start + Math.max(1, Math.floor(limit)));
  if (end < total && isHighSurrogateAt(original, end - 1)) end = end - 1 > start ? end - 1 : end + 1;
  const startByte = utf8ByteLength(original.slice(0, start));
  const text = original.slice(start, end);
  return {
    start,
    end,
    text,
    totalChars: total,
    startByte,
    endByte: startByte + utf8ByteLength(text),
    totalBytes: utf8ByteLength(original),
    nextOffset: end < total ? end : undefined,
  };
}
