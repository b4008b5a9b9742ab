import { describe, expect, it } from "vitest";
import { pdfText } from "../../src/files/pdf-text.js";
import { onePagePdf } from "../support/pdf.js";

describe("a PDF's text", () => {
  it("is read in a worker thread", async () => {
    const read = await pdfText(onePagePdf("Quarterly revenue grew 12 percent."), {
      timeoutMs: 30_000,
    });
    expect(read).toEqual({ ok: true, text: "Quarterly revenue grew 12 percent.", pages: 1 });
  });

  it("says a damaged file is unreadable", async () => {
    const bytes = new TextEncoder().encode("%PDF-1.4\nthis is not what it claims\n%%EOF");
    expect(await pdfText(bytes, { timeoutMs: 30_000 })).toEqual({
      ok: false,
      reason: "unreadable",
    });
  });

  it("gives up on a file that takes longer than its limit, and ends the worker", async () => {
    expect(await pdfText(onePagePdf("Slow."), { timeoutMs: 1 })).toEqual({
      ok: false,
      reason: "too_slow",
    });
  });
});
