/** Fixed-capacity append (oldest dropped first), returning a new array. */
export function appendToRing<T>(entries: readonly T[], item: T, capacity: number): T[] {
  const cap = Math.max(1, Math.floor(capacity));
  const next = [...entries, item];
  return next.slice(Math.max(0, next.length - cap));
}
