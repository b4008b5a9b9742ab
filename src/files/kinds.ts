import { z } from "zod";

/**
 * What the bot can make of a file people shared: text it passes on as it is, a PDF whose text
 * it extracts, an image the service does not take, or anything else (a binary, an archive, an
 * office document), which it cannot read. Decided from what Slack says of the file (its
 * mimetype, Slack's `filetype`, its name), before anything is downloaded.
 */
export type FileKind = "text" | "pdf" | "image" | "other";

/** The fields of a Slack file object the bot reads (events' `files`, `files.info`). */
export interface SharedFile {
  id: string;
  name?: string | undefined;
  title?: string | undefined;
  mimetype?: string | undefined;
  /** Slack's own type: "text", "markdown", "python", "csv", "pdf", "png", … */
  filetype?: string | undefined;
  /** Bytes, as Slack reports it. */
  size?: number | undefined;
  url_private?: string | undefined;
  url_private_download?: string | undefined;
  /** "hosted", "snippet", "external", "tombstone" (deleted), "hidden_by_limit", … */
  mode?: string | undefined;
  /** "check_file_info": the event left the file's details out; `files.info` has them. */
  file_access?: string | undefined;
}

const text = z.string().max(2_000).optional().catch(undefined);

/** A Slack file object as the bot keeps it: its known fields only, each checked on its own. */
const SharedFileSchema = z.object({
  id: z.string().min(1).max(100),
  name: text,
  title: text,
  mimetype: text,
  filetype: text,
  size: z.number().int().nonnegative().optional().catch(undefined),
  url_private: text,
  url_private_download: text,
  mode: text,
  file_access: text,
});

/**
 * The files of a message as Slack sent them (an event's or `conversations.replies`'
 * `files`): every entry that names a file, with what the bot reads of it; an entry without
 * an id is not a file it could ever read, and is dropped.
 */
export function sharedFiles(raw: unknown): SharedFile[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry) => {
    const parsed = SharedFileSchema.safeParse(entry);
    return parsed.success ? [parsed.data] : [];
  });
}

/** Mimetypes outside `text/` whose content is text. */
const TEXT_MIMETYPES = new Set([
  "application/json",
  "application/ld+json",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/javascript",
  "application/x-javascript",
  "application/typescript",
  "application/x-sh",
  "application/x-shellscript",
  "application/sql",
  "application/graphql",
  "application/x-ndjson",
]);

/** Slack `filetype`s that are text whatever the mimetype says (code, snippets, logs). */
const TEXT_FILETYPES = new Set([
  "text",
  "markdown",
  "post",
  "csv",
  "tsv",
  "json",
  "yaml",
  "xml",
  "html",
  "css",
  "javascript",
  "typescript",
  "python",
  "ruby",
  "go",
  "rust",
  "java",
  "kotlin",
  "swift",
  "c",
  "cpp",
  "csharp",
  "php",
  "shell",
  "powershell",
  "sql",
  "diff",
  "dockerfile",
  "toml",
  "ini",
  "log",
]);

/** File name endings that are text, for files Slack types only as "binary" or not at all. */
const TEXT_ENDINGS =
  /\.(txt|md|markdown|csv|tsv|json|jsonl|ndjson|ya?ml|xml|toml|ini|cfg|conf|log|sql|sh|bash|zsh|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|js|mjs|cjs|ts|tsx|jsx|css|scss|html?|diff|patch|env\.example)$/i;

export function fileKind(file: SharedFile): FileKind {
  const mimetype = (file.mimetype ?? "").toLowerCase().split(";")[0]?.trim() ?? "";
  const filetype = (file.filetype ?? "").toLowerCase();
  if (mimetype === "application/pdf" || filetype === "pdf") return "pdf";
  if (mimetype.startsWith("image/")) return "image";
  if (file.mode === "snippet" || TEXT_FILETYPES.has(filetype)) return "text";
  if (mimetype.startsWith("text/") || TEXT_MIMETYPES.has(mimetype)) return "text";
  if (TEXT_ENDINGS.test(file.name ?? "")) return "text";
  return "other";
}

/** How a file is named to the assistant and to people: its name, else its title, else its id. */
export function fileName(file: SharedFile): string {
  return file.name?.trim() || file.title?.trim() || file.id;
}

/** A short type for the file's introduction: Slack's filetype, else the mimetype. */
export function fileType(file: SharedFile): string {
  return file.filetype?.trim() || file.mimetype?.trim() || "file";
}
