/**
 * The words of the code that must not reach a first `/keeper` screen (`src/host/plain-words.test.ts`,
 * `test/e2e/tmux-keeper.test.ts`). Setting names and values are the user's own words: a check
 * leaves them out.
 */
import { SETTING_KEYS } from "../../src/settings/keys.ts";

/** Words of the code, not of the user: none of them on a first screen. */
export const INTERNAL_WORDS = [
  "tok-eq",
  "seam",
  "frozen",
  "spill",
  "waiting for the cache",
  "fingerprint",
  "layer",
  "keeper-rewrite",
  "ttl-expiry",
  "tally",
  "rewrites caused",
  "gate",
  "stub",
  "purge",
  "frontier",
  "occurrence",
  "closed cycle",
  "prefix",
  "tail",
  "batch key",
];

const ENUM_VALUES = SETTING_KEYS.flatMap((k) => k.values ?? []);

/** A screen without its setting names and values and the subcommand's own option. */
const prose = (screen: string): string => {
  let out = screen.replace(/\b[a-z][A-Za-z]*(\.[a-zA-Z]+)+\b/g, "<key>").replace(/--detail/g, "");
  for (const v of ENUM_VALUES) out = out.split(v).join("<value>");
  return out;
};

export function internalWordsIn(screen: string): string[] {
  const text = prose(screen).toLowerCase();
  return INTERNAL_WORDS.filter((w) => text.includes(w));
}

