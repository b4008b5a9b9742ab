import { describe, expect, it } from "vitest";
import {
  collectPages,
  type ListPage,
  oldestFirst,
  readListPage,
} from "../../src/service/paging.js";

describe("readListPage", () => {
  it("reads a bare array as one final page", () => {
    expect(readListPage([{ id: "a" }])).toEqual({ items: [{ id: "a" }], nextCursor: undefined });
  });

  it.each(["data", "messages", "threads", "items", "results"])("reads items under %s", (key) => {
    expect(readListPage({ [key]: [{ id: "a" }] })?.items).toEqual([{ id: "a" }]);
  });

  it.each(["next_cursor", "nextCursor", "cursor"])("takes an explicit cursor from %s", (key) => {
    expect(readListPage({ data: [{ id: "a" }], [key]: "c2" })?.nextCursor).toBe("c2");
  });

  it("continues after the last item's id when has_more or hasMore is true", () => {
    const items = [{ id: "a" }, { id: "b" }];
    expect(readListPage({ object: "list", data: items, has_more: true })?.nextCursor).toBe("b");
    expect(readListPage({ items, hasMore: true })?.nextCursor).toBe("b");
  });

  it("ends when has_more is false, even with a cursor field", () => {
    expect(readListPage({ data: [{ id: "a" }], has_more: false, cursor: "x" })?.nextCursor).toBe(
      undefined,
    );
    expect(readListPage({ data: [{ id: "a" }] })?.nextCursor).toBe(undefined);
  });

  it("has no cursor when has_more is true but the last item has no id", () => {
    expect(readListPage({ data: [{}], has_more: true })?.nextCursor).toBe(undefined);
  });

  it("is undefined for bodies that are not lists", () => {
    expect(readListPage({ data: "x" })).toBeUndefined();
    expect(readListPage("nope")).toBeUndefined();
    expect(readListPage(null)).toBeUndefined();
  });
});

describe("collectPages", () => {
  function pages(...script: ListPage[]) {
    const queries: Record<string, string>[] = [];
    const fetchPage = async (query: Record<string, string>): Promise<ListPage> => {
      queries.push(query);
      return script[queries.length - 1] ?? { items: [], nextCursor: undefined };
    };
    return { queries, fetchPage };
  }

  it("follows cursors with the page size, keeping the base query", async () => {
    const { queries, fetchPage } = pages(
      { items: [1, 2], nextCursor: "c1" },
      { items: [3], nextCursor: undefined },
    );
    const all = await collectPages(fetchPage, { pageSize: 2 }, { assistantId: "A" });
    expect(all).toEqual([1, 2, 3]);
    expect(queries).toEqual([
      { assistantId: "A", limit: "2" },
      { assistantId: "A", limit: "2", after: "c1" },
    ]);
  });

  it("uses the configured parameter names", async () => {
    const { queries, fetchPage } = pages(
      { items: [1], nextCursor: "c1" },
      { items: [2], nextCursor: undefined },
    );
    await collectPages(fetchPage, { limitParam: "page_size", cursorParam: "cursor", pageSize: 10 });
    expect(queries).toEqual([{ page_size: "10" }, { page_size: "10", cursor: "c1" }]);
  });

  it("stops at an empty page", async () => {
    const { queries, fetchPage } = pages(
      { items: [1], nextCursor: "c1" },
      { items: [], nextCursor: "c2" },
    );
    expect(await collectPages(fetchPage)).toEqual([1]);
    expect(queries).toHaveLength(2);
  });

  it("stops when the cursor does not advance", async () => {
    const { queries, fetchPage } = pages(
      { items: [1], nextCursor: "c1" },
      { items: [2], nextCursor: "c1" },
      { items: [3], nextCursor: "c2" },
    );
    expect(await collectPages(fetchPage)).toEqual([1, 2]);
    expect(queries).toHaveLength(2);
  });

  it("stops after maxPages even when the service always has more", async () => {
    let n = 0;
    const fetchPage = async (): Promise<ListPage> => ({ items: [n], nextCursor: `c${n++}` });
    expect(await collectPages(fetchPage, { maxPages: 3 })).toEqual([0, 1, 2]);
    expect(n).toBe(3);
  });
});

describe("oldestFirst", () => {
  it("keeps ascending or tied lists as they are", () => {
    const items = [
      { id: "a", createdAt: "2024-01-01T00:00:00Z" },
      { id: "b", createdAt: "2024-01-01T00:00:00Z" },
      { id: "c", createdAt: "2024-01-02T00:00:00Z" },
    ];
    expect(oldestFirst(items).map((i) => i.id)).toEqual(["a", "b", "c"]);
  });

  it("reverses a list that is newest first", () => {
    const items = [
      { id: "c", createdAt: 3 },
      { id: "b", createdAt: 2 },
      { id: "a", created_at: 1 },
    ];
    expect(oldestFirst(items).map((i) => i.id)).toEqual(["a", "b", "c"]);
  });

  it("keeps the service's order when timestamps are missing or mixed", () => {
    expect(oldestFirst([{ id: "b", createdAt: 2 }, { id: "a" }]).map((i) => i.id)).toEqual([
      "b",
      "a",
    ]);
    const mixed = [
      { id: "a", createdAt: 2 },
      { id: "b", createdAt: 1 },
      { id: "c", createdAt: 3 },
    ];
    expect(oldestFirst(mixed).map((i) => i.id)).toEqual(["a", "b", "c"]);
  });
});
