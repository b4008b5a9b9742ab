import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * A PDF's text, read in a worker thread (unpdf, a build of Mozilla's pdf.js for servers): a
 * big or hostile PDF costs that thread, never the event loop, and a PDF that takes longer than
 * `timeoutMs` or more memory than `maxMemoryMb` ends the worker, not the bot. The worker's
 * code is written here as a string, so that it runs the same from the compiled bot and from
 * TypeScript (tests), and it loads unpdf's CommonJS build from where this module finds it.
 */

export interface PdfOptions {
  /** The whole extraction, ms. */
  timeoutMs: number;
  /** The worker's heap, MB. Default 256. */
  maxMemoryMb?: number;
}

export type PdfText = { ok: true; text: string; pages: number } | { ok: false; reason: PdfRefusal };

/** `unreadable`: not a PDF, damaged or encrypted; `too_slow`: over the time or memory limit. */
export type PdfRefusal = "unreadable" | "too_slow";

const UNPDF = createRequire(import.meta.url).resolve("unpdf");

const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { extractText, getDocumentProxy } = require(workerData.unpdf);
(async () => {
  try {
    const pdf = await getDocumentProxy(workerData.bytes, { verbosity: 0 });
    const { totalPages, text } = await extractText(pdf, { mergePages: true });
    parentPort.postMessage({ ok: true, text, pages: totalPages });
  } catch {
    parentPort.postMessage({ ok: false, reason: "unreadable" });
  }
})();
`;

export async function pdfText(bytes: Uint8Array, options: PdfOptions): Promise<PdfText> {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { unpdf: UNPDF, bytes },
    resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb ?? 256 },
    // Nothing of the worker reaches the bot's output: pdf.js warns on stdout about damaged files.
    stdout: true,
    stderr: true,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<PdfText>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, reason: "too_slow" }), options.timeoutMs);
      worker.once("message", (result: PdfText) => resolve(result));
      // Out of memory, or anything else that ends the thread.
      worker.once("error", () => resolve({ ok: false, reason: "too_slow" }));
      worker.once("exit", () => resolve({ ok: false, reason: "unreadable" }));
    });
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}
