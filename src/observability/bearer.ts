import { createHash, timingSafeEqual } from "node:crypto";

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * Whether an `Authorization` header carries exactly `token` as a bearer credential. Both sides
 * are hashed first, so the comparison takes the same time whatever was sent and how long it
 * is: timing tells a guesser nothing about how close they came.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer +(\S+) *$/i.exec(header ?? "")?.[1] ?? "";
  return timingSafeEqual(digest(presented), digest(token));
}
