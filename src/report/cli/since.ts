/**
 * `--since`: how far back `report --all` looks. A duration back from now (`30d`, `12h`, `2w`)
 * or a calendar date (`2025-11-01`, midnight UTC; any ISO date-time Date.parse reads). The
 * error names the value and the forms accepted.
 */
export type Since = { ok: true; fromMs: number; label: string } | { ok: false; message: string };

const UNIT_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
const UNIT_WORD: Record<string, string> = { h: "hour", d: "day", w: "week" };

export const SINCE_FORMS = "a duration back from now (30d, 12h, 2w) or a date (2025-11-01)";

export function parseSince(value: string, nowMs: number): Since {
  const v = value.trim();
  const duration = /^(\d+(?:\.\d+)?)\s*([hdw])$/i.exec(v);
  if (duration) {
    const n = Number(duration[1]);
    const unit = duration[2]!.toLowerCase();
    if (!(n > 0)) return { ok: false, message: `--since ${value}: the duration must be more than 0` };
    return { ok: true, fromMs: nowMs - n * UNIT_MS[unit]!, label: `last ${duration[1]} ${UNIT_WORD[unit]}${n === 1 ? "" : "s"}` };
  }
  if (/^\d{4}-\d{2}-\d{2}([T ].*)?$/.test(v)) {
    const at = Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v);
    if (!Number.isFinite(at)) return { ok: false, message: `--since ${value}: not a real date; expected ${SINCE_FORMS}` };
    if (at > nowMs) return { ok: false, message: `--since ${value} is in the future` };
    return { ok: true, fromMs: at, label: `since ${v}` };
  }
  return { ok: false, message: `--since ${value}: expected ${SINCE_FORMS}` };
}
