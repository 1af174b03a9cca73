/** The user's one line about a part of the extension that failed: what, where, and that the rest goes on. Pure. */

export function faultNotice(part: string, where: string, error: string): string {
  return `context-keeper: ${part} failed at ${where} (${error}); the other parts go on — this is reported once`;
}
