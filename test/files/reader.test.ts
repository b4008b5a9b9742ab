import { describe, expect, it } from "vitest";
import type { Downloaded } from "../../src/files/download.js";
import type { SharedFile } from "../../src/files/kinds.js";
import { fileNotes } from "../../src/files/notes.js";
import { type FileSource, readFiles, size } from "../../src/files/reader.js";
import { onePagePdf } from "../support/pdf.js";

const LIMITS = { maxFileBytes: 1_000, maxQuestionBytes: 1_500, pdfTimeoutMs: 10_000 };

/** Slack's file host as a map of URL to bytes; records each download and the limit it had. */
function source(files: Record<string, Uint8Array | string>, described: SharedFile[] = []) {
  const asked: { url: string; maxBytes: number }[] = [];
  const looked: string[] = [];
  const slack: FileSource = {
    fetch: async (url, maxBytes): Promise<Downloaded> => {
      asked.push({ url, maxBytes });
      const body = files[url];
      if (body === undefined) return { ok: false, reason: "not_allowed" };
      const bytes = Buffer.from(body);
      if (bytes.length > maxBytes) return { ok: false, reason: "too_large" };
      return { ok: true, bytes, contentType: "text/plain" };
    },
    lookUp: async (id) => {
      looked.push(id);
      if (id === "FBROKEN") throw new Error("files.info failed");
      return described.find((f) => f.id === id);
    },
  };
  return { slack, asked, looked };
}

const file = (id: string, name: string, extra: Partial<SharedFile> = {}): SharedFile => ({
  id,
  name,
  url_private: `https://files.slack.com/${id}`,
  ...extra,
});

describe("reading the files of a question", () => {
  it("reads text and PDFs in order, once each, and says why the rest could not be read", async () => {
    const { slack, asked } = source({
      "https://files.slack.com/F1": "hello\n",
      "https://files.slack.com/F2": onePagePdf("Quarterly numbers"),
      "https://files.slack.com/F3": Buffer.from([0x41, 0x00, 0x42]),
      "https://files.slack.com/F4": onePagePdf(""),
      "https://files.slack.com/F5": "%PDF-1.4 broken",
    });
    const read = await readFiles(
      [
        file("F1", "a.txt"),
        file("F2", "q.pdf", { mimetype: "application/pdf" }),
        file("F1", "a.txt"),
        file("F3", "data.txt"),
        file("F4", "scan.pdf", { filetype: "pdf" }),
        file("F5", "bad.pdf", { filetype: "pdf" }),
        file("F6", "gone.txt", { mode: "tombstone" }),
        file("F7", "hidden.txt", { mode: "hidden_by_limit" }),
        file("F8", "photo.jpg", { mimetype: "image/jpeg" }),
        file("F9", "deck.pptx", { mimetype: "application/vnd.ms-powerpoint" }),
        { id: "F10", name: "nowhere.txt" },
      ],
      slack,
      LIMITS,
    );
    expect(read.texts).toEqual([
      { name: "a.txt", type: "file", text: "hello\n" },
      { name: "q.pdf", type: "application/pdf", text: "Quarterly numbers" },
    ]);
    expect(read.unread).toEqual([
      { name: "data.txt", why: "it is not text (it holds binary data)" },
      { name: "scan.pdf", why: "it holds no text (a scan, or only pictures)" },
      { name: "bad.pdf", why: "its text could not be read (a damaged or locked PDF)" },
      { name: "gone.txt", why: "it was deleted" },
      { name: "hidden.txt", why: "Slack hides it under the workspace's plan limit" },
      { name: "photo.jpg", why: "the assistant service does not take images" },
      { name: "deck.pptx", why: "it is neither text nor a PDF" },
      { name: "nowhere.txt", why: "Slack gave no address to download it" },
    ]);
    // Nothing was downloaded that could not be read anyway.
    expect(asked.map((a) => a.url.slice(-2))).toEqual(["F1", "F2", "F3", "F4", "F5"]);
  });

  it("keeps to the limit of one question's files, naming which limit a file passed", async () => {
    const { slack, asked } = source({
      "https://files.slack.com/F1": "a".repeat(900),
      "https://files.slack.com/F2": "b".repeat(900),
      "https://files.slack.com/F3": "c".repeat(500),
    });
    const read = await readFiles(
      [
        file("F1", "one.txt"),
        file("F2", "two.txt"),
        file("F3", "three.txt"),
        file("F4", "big.txt", { size: 5_000 }),
      ],
      slack,
      LIMITS,
    );
    expect(read.texts.map((t) => t.name)).toEqual(["one.txt", "three.txt"]);
    expect(read.unread).toEqual([
      { name: "two.txt", why: "the files of one question may hold 1 KB at most" },
      { name: "big.txt", why: "it is over the 1,000 bytes limit for one file" },
    ]);
    // Each download may take no more than what is left of the question's bytes.
    expect(asked.map((a) => a.maxBytes)).toEqual([1_000, 600, 600]);
  });

  it("asks Slack for a file the event gave only by id, and leaves it when Slack cannot say", async () => {
    const { slack, looked } = source({ "https://files.slack.com/F2": "from files.info" }, [
      file("F2", "later.txt"),
    ]);
    const read = await readFiles(
      [
        { id: "F2", file_access: "check_file_info" },
        { id: "FBROKEN", name: "broken.txt", file_access: "check_file_info" },
      ],
      slack,
      LIMITS,
    );
    expect(looked).toEqual(["F2", "FBROKEN"]);
    expect(read.texts).toEqual([{ name: "later.txt", type: "file", text: "from files.info" }]);
    expect(read.unread).toEqual([
      { name: "broken.txt", why: "Slack gave no address to download it" },
    ]);
  });

  it("reads nothing more once the turn stopped", async () => {
    const { slack, asked } = source({ "https://files.slack.com/F1": "x" });
    const stop = new AbortController();
    stop.abort();
    expect(await readFiles([file("F1", "a.txt")], slack, LIMITS, stop.signal)).toEqual({
      texts: [],
      unread: [],
    });
    expect(asked).toEqual([]);
  });
});

describe("the notes on files", () => {
  it("names what was not read with why, what was cut and what was left out", () => {
    expect(
      fileNotes(
        [{ name: "a.png", why: "the assistant service does not take images" }],
        ["long.log"],
        ["x.txt", "y.txt"],
      ),
    ).toEqual([
      "Not passed on to the assistant: a.png (the assistant service does not take images).",
      "Only the beginning of long.log reached the assistant: the whole file did not fit.",
      "Left out for want of room in what the assistant is sent: x.txt; y.txt.",
    ]);
    expect(fileNotes([], [], [])).toEqual([]);
  });

  it("names five files at most, and counts the rest", () => {
    const many = Array.from({ length: 7 }, (_, i) => ({ name: `f${i}.png`, why: "an image" }));
    expect(fileNotes(many, [], [])).toEqual([
      "Not passed on to the assistant: f0.png (an image); f1.png (an image); f2.png (an image); f3.png (an image); f4.png (an image); and 2 more.",
    ]);
  });

  it("says sizes as people read them", () => {
    expect([size(10 * 1_048_576), size(1_572_864), size(2_048), size(999)]).toEqual([
      "10 MB",
      "1.5 MB",
      "2 KB",
      "999 bytes",
    ]);
  });
});
