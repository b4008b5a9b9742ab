/**
 * Byte order of two strings, as SQLite compares TEXT and as PostgreSQL's `COLLATE "C"` does:
 * what the stores list comes back in one order whichever database keeps it, whatever the
 * server's locale.
 */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
