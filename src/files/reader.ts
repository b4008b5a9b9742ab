import type { Downloaded, DownloadRefusal } from "./download.js";
import type { FileText } from "./fit.js";
import { fileKind, fileName, fileType, type SharedFile } from "./kinds.js";
import { type PdfRefusal, pdfText } from "./pdf-text.js";
import { decodeText } from "./text.js";

/**
 * Reads the files shared with a question as text, one after the other in the order given
 * (the question's own first, then the thread's), within a byte limit per file and one for
 * all the files of the question. What cannot be read is named with why, in words a person
 * understands, and never stops the others or the question.
 */

export interface FileLimits {
  /** Largest file read, bytes. */
  maxFileBytes: number;
  /** Most bytes read for one question, its own files and its thread's together. */
  maxQuestionBytes: number;
  /** The longest a PDF's text may take to read, ms. */
  pdfTimeoutMs: number;
}

/**
 * Downloads a file's bytes from Slack (files/download.ts, with the workspace's token), at most
 * `maxBytes`; `html` when the file itself is HTML.
 */
export type FetchFile = (
  url: string,
  maxBytes: number,
  html: boolean,
  signal?: AbortSignal,
) => Promise<Downloaded>;

/** The file's object from Slack (`files.info`), for a file an event describes only by its id. */
export type LookUpFile = (id: string) => Promise<SharedFile | undefined>;

/** How the reader reaches Slack. */
export interface FileSource {
  fetch: FetchFile;
  lookUp: LookUpFile;
}

/** A file not passed on, and why (a clause: "over the 10 MB limit for one file"). */
export interface UnreadFile {
  name: string;
  why: string;
}

export interface ReadFiles {
  /** The files read, in the order given. */
  texts: FileText[];
  unread: UnreadFile[];
}

const KIND_REFUSALS = {
  image: "the assistant service does not take images",
  other: "it is neither text nor a PDF",
} as const;

/** Slack's `mode`s of a file whose content the bot can never download. */
const MODE_REFUSALS: Record<string, string> = {
  tombstone: "it was deleted",
  hidden_by_limit: "Slack hides it under the workspace's plan limit",
  external: "it is kept outside Slack",
};

const DOWNLOAD_REFUSALS: Record<Exclude<DownloadRefusal, "too_large">, string> = {
  off_slack: "its address is not on Slack's file host",
  not_allowed: "Slack did not let the bot download it",
  failed: "it could not be downloaded",
  timeout: "its download took too long",
};

const PDF_REFUSALS: Record<PdfRefusal, string> = {
  unreadable: "its text could not be read (a damaged or locked PDF)",
  too_slow: "it is too large or too complex to read in time",
};

export async function readFiles(
  files: readonly SharedFile[],
  source: FileSource,
  limits: FileLimits,
  signal?: AbortSignal,
): Promise<ReadFiles> {
  const texts: FileText[] = [];
  const unread: UnreadFile[] = [];
  const seen = new Set<string>();
  let room = limits.maxQuestionBytes;
  for (const file of files) {
    if (seen.has(file.id)) continue;
    seen.add(file.id);
    if (signal?.aborted) break;
    const whole = await described(file, source);
    const name = fileName(whole);
    const read = await readOne(whole, source.fetch, { ...limits, room }, signal);
    if ("why" in read) {
      unread.push({ name, why: read.why });
      continue;
    }
    room -= read.bytes;
    texts.push({ name, type: fileType(whole), text: read.text });
  }
  return { texts, unread };
}

/**
 * The file as Slack describes it in full: an event may give only its id and
 * `file_access: "check_file_info"` (a file from another organisation, say), and `files.info`
 * then says the rest; a lookup that fails leaves the file as it was (it is then not read).
 */
async function described(file: SharedFile, source: FileSource): Promise<SharedFile> {
  if (file.url_private !== undefined || file.file_access !== "check_file_info") return file;
  try {
    return (await source.lookUp(file.id)) ?? file;
  } catch {
    return file;
  }
}

type OneFile = { text: string; bytes: number } | { why: string };

async function readOne(
  file: SharedFile,
  fetch: FetchFile,
  limits: FileLimits & { room: number },
  signal: AbortSignal | undefined,
): Promise<OneFile> {
  const kind = fileKind(file);
  if (kind === "image" || kind === "other") return { why: KIND_REFUSALS[kind] };
  const modeRefusal = file.mode === undefined ? undefined : MODE_REFUSALS[file.mode];
  if (modeRefusal) return { why: modeRefusal };
  const url = file.url_private_download ?? file.url_private;
  if (!url) return { why: "Slack gave no address to download it" };
  const overFile = `it is over the ${size(limits.maxFileBytes)} limit for one file`;
  const overQuestion = `the files of one question may hold ${size(limits.maxQuestionBytes)} at most`;
  // Slack says how big it is: no download to learn it is too big.
  if (file.size !== undefined && file.size > limits.maxFileBytes) return { why: overFile };
  if (file.size !== undefined && file.size > limits.room) return { why: overQuestion };
  const maxBytes = Math.min(limits.maxFileBytes, limits.room);
  const html = (file.mimetype ?? "").toLowerCase().startsWith("text/html");
  const downloaded = await fetch(url, maxBytes, html, signal);
  if (!downloaded.ok) {
    if (downloaded.reason !== "too_large") return { why: DOWNLOAD_REFUSALS[downloaded.reason] };
    return { why: maxBytes < limits.maxFileBytes ? overQuestion : overFile };
  }
  const bytes = downloaded.bytes.length;
  if (kind === "pdf") {
    const pdf = await pdfText(downloaded.bytes, { timeoutMs: limits.pdfTimeoutMs });
    if (!pdf.ok) return { why: PDF_REFUSALS[pdf.reason] };
    const text = pdf.text.trim();
    return text === "" ? { why: "it holds no text (a scan, or only pictures)" } : { text, bytes };
  }
  const text = decodeText(downloaded.bytes);
  return text === undefined ? { why: "it is not text (it holds binary data)" } : { text, bytes };
}

/** Bytes as people read a limit: "10 MB", "512 KB". */
export function size(bytes: number): string {
  if (bytes >= 1_048_576 && bytes % 1_048_576 === 0) return `${bytes / 1_048_576} MB`;
  if (bytes >= 1_048_576) return `${(bytes / 1_048_576).toFixed(1)} MB`;
  if (bytes >= 1_024) return `${Math.round(bytes / 1_024)} KB`;
  return `${bytes.toLocaleString("en-US")} bytes`;
}
