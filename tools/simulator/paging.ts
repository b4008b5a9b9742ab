import { HttpError } from "./wire.js";

/**
 * Cursor paging for the list endpoints (messages of a thread, threads of a person). The
 * interface shows neither the parameters nor the shape (§4); the simulator uses the
 * common OpenAI-style list: `?limit=<n>&after=<id>` in, `{object:"list", data, first_id,
 * last_id, has_more}` out, items oldest first. The next page starts `after` the last id.
 */

/** Default page size when `limit` is absent. */
export const DEFAULT_PAGE_LIMIT = 100;
/** Larger limits are clamped to this (interface §8: up to 400 messages per page). */
export const MAX_PAGE_LIMIT = 400;

export interface ListBody<T> {
  object: "list";
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** `limit` from the query: absent → default, above the maximum → clamped, else 400. */
export function pageLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_LIMIT;
  if (!/^\d+$/u.test(raw) || Number(raw) < 1) {
    throw new HttpError(400, "limit must be an integer of at least 1");
  }
  return Math.min(Number(raw), MAX_PAGE_LIMIT);
}

export function page<T extends { id: string }>(
  items: readonly T[],
  query: Readonly<Record<string, string>>,
): ListBody<T> {
  const limit = pageLimit(query.limit);
  let start = 0;
  if (query.after !== undefined) {
    const index = items.findIndex((item) => item.id === query.after);
    if (index < 0) throw new HttpError(400, "after must be the id of an item of this list");
    start = index + 1;
  }
  const data = items.slice(start, start + limit);
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + limit < items.length,
  };
}
