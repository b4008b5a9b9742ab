/**
 * Reading every page of a list endpoint. The interface hides both the paging parameters
 * and the response shape (§4), so the reader accepts the shapes services commonly use and
 * stops on anything that could otherwise loop forever.
 */

export interface PagingOptions {
  /** Default "limit": the query parameter carrying the page size. */
  limitParam?: string;
  /** Default "after": the query parameter carrying the cursor of the next page. */
  cursorParam?: string;
  /** Default 400 (the interface's maximum for messages): items asked for per page. */
  pageSize?: number;
  /** Default 50: pages read at most, whatever the service says about more. */
  maxPages?: number;
}

export interface ListPage {
  items: unknown[];
  /** Where the next page starts; undefined when the service says there is none. */
  nextCursor: string | undefined;
}

const ITEM_KEYS = ["data", "messages", "threads", "items", "results"] as const;
const CURSOR_KEYS = ["next_cursor", "nextCursor", "cursor"] as const;

/**
 * One page from a list body: a JSON array, or an object with its items under one of
 * ITEM_KEYS. The next cursor is an explicit cursor field, else (when has_more/hasMore is
 * true) the last item's id, which is how `after`-style paging continues. An explicit
 * `has_more: false` ends the listing even when a cursor field is present.
 * Undefined when the body has none of these shapes.
 */
export function readListPage(body: unknown): ListPage | undefined {
  if (Array.isArray(body)) return { items: body, nextCursor: undefined };
  if (typeof body !== "object" || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const key = ITEM_KEYS.find((k) => Array.isArray(record[k]));
  if (key === undefined) return undefined;
  const items = record[key] as unknown[];
  const hasMore = record.has_more ?? record.hasMore;
  if (hasMore === false) return { items, nextCursor: undefined };
  const cursor = CURSOR_KEYS.map((k) => record[k]).find(
    (c): c is string => typeof c === "string" && c !== "",
  );
  if (cursor !== undefined) return { items, nextCursor: cursor };
  if (hasMore === true) return { items, nextCursor: idOf(items.at(-1)) };
  return { items, nextCursor: undefined };
}

function idOf(item: unknown): string | undefined {
  if (typeof item !== "object" || item === null) return undefined;
  const id = (item as { id?: unknown }).id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/**
 * Reads pages until the service says there are no more, a page is empty, a cursor repeats
 * (the service is not advancing) or `maxPages` pages were read. `fetchPage` receives the
 * query of one page and resolves to its parsed page (or throws).
 */
export async function collectPages(
  fetchPage: (query: Record<string, string>) => Promise<ListPage>,
  options: PagingOptions = {},
  baseQuery: Readonly<Record<string, string>> = {},
): Promise<unknown[]> {
  const { limitParam = "limit", cursorParam = "after", pageSize = 400, maxPages = 50 } = options;
  const all: unknown[] = [];
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const query: Record<string, string> = { ...baseQuery, [limitParam]: String(pageSize) };
    if (cursor !== undefined) query[cursorParam] = cursor;
    const { items, nextCursor } = await fetchPage(query);
    all.push(...items);
    if (items.length === 0 || nextCursor === undefined || seenCursors.has(nextCursor)) break;
    seenCursors.add(nextCursor);
    cursor = nextCursor;
  }
  return all;
}

/**
 * Items in creation order. A service that lists newest first (as some `after`-paged APIs
 * do by default) is recognised by `createdAt` values that never increase and do decrease;
 * anything else (missing or mixed timestamps) keeps the service's order.
 */
export function oldestFirst<T>(items: readonly T[]): T[] {
  const times = items.map((item) => createdAt(item));
  let decreases = false;
  for (let i = 1; i < times.length; i++) {
    const before = times[i - 1];
    const current = times[i];
    if (before === undefined || current === undefined || current > before) return [...items];
    if (current < before) decreases = true;
  }
  return decreases ? [...items].reverse() : [...items];
}

function createdAt(item: unknown): number | undefined {
  if (typeof item !== "object" || item === null) return undefined;
  const value =
    (item as Record<string, unknown>).createdAt ?? (item as Record<string, unknown>).created_at;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string") {
    const time = Date.parse(value);
    return Number.isNaN(time) ? undefined : time;
  }
  return undefined;
}
