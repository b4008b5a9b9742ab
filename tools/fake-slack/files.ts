import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Files people shared, as the fake Slack keeps and serves them: each has a Slack file object
 * (what events, `conversations.replies` and `files.info` carry) and bytes served at its
 * `url_private` as Slack's file host does. A download needs `Authorization: Bearer` with a
 * bot token of the file's workspace; without one Slack answers its sign-in page, as HTML with
 * status 200, and so does this. Every download asked for is recorded, never the token.
 */

export interface NewFile {
  name: string;
  /** The bytes served; a string is UTF-8. */
  content: string | Uint8Array;
  /** Default "text/plain". */
  mimetype?: string;
  /** Slack's type; default from the name's ending, else "text". */
  filetype?: string;
  title?: string;
  /** Slack's `mode`; default "hosted" ("snippet", "tombstone", "hidden_by_limit", …). */
  mode?: string;
  /** The size Slack reports; default the content's. */
  size?: number;
  /** Answer the download with a redirect here instead of the file. */
  redirectTo?: string;
  /** Leave `url_private` out of the object; `file_access: "check_file_info"` says to ask. */
  withoutUrl?: boolean;
}

/** A Slack file object, as the fake hands it out. */
export type SlackFile = Record<string, unknown> & { id: string; name: string };

export interface FileDownload {
  fileId: string;
  /** The request carried a bearer token the file's workspace accepts. */
  authorized: boolean;
  /** The request carried an Authorization header at all. */
  hadAuthorization: boolean;
}

interface Kept {
  object: SlackFile;
  team: string;
  content: Uint8Array;
  redirectTo: string | undefined;
}

const SIGN_IN_PAGE = "<!DOCTYPE html><html><body>Sign in to Slack</body></html>";

export class FakeFiles {
  private readonly kept = new Map<string, Kept>();
  readonly downloads: FileDownload[] = [];
  private next = 1;

  /** A new file of workspace `team`, served from `base` (`http://127.0.0.1:<port>/`). */
  add(team: string, base: string, file: NewFile): SlackFile {
    const id = `F${String(this.next++).padStart(8, "0")}`;
    const content =
      typeof file.content === "string" ? new TextEncoder().encode(file.content) : file.content;
    const name = encodeURIComponent(file.name);
    const url = `${base}files-pri/${team}-${id}/${name}`;
    const object: SlackFile = {
      id,
      name: file.name,
      title: file.title ?? file.name,
      mimetype: file.mimetype ?? "text/plain",
      filetype: file.filetype ?? typeOf(file.name),
      size: file.size ?? content.length,
      mode: file.mode ?? "hosted",
      user: "U0ALICE",
    };
    if (file.withoutUrl) object.file_access = "check_file_info";
    else {
      object.url_private = url;
      object.url_private_download = `${base}files-pri/${team}-${id}/download/${name}`;
    }
    this.kept.set(id, { object, team, content, redirectTo: file.redirectTo });
    return object;
  }

  /** `files.info`: the file's object, with its URLs, when `team` may see it. */
  info(team: string, base: string, id: string): SlackFile | undefined {
    const kept = this.kept.get(id);
    if (kept === undefined || kept.team !== team) return undefined;
    const name = encodeURIComponent(kept.object.name);
    return {
      ...kept.object,
      url_private: `${base}files-pri/${team}-${id}/${name}`,
      url_private_download: `${base}files-pri/${team}-${id}/download/${name}`,
    };
  }

  /**
   * Answers a request for `/files-pri/<team>-<id>/…`; `teamOf` names the workspace a bearer
   * token belongs to (undefined: none).
   */
  serve(
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
    teamOf: (token: string) => string | undefined,
  ): void {
    const match = /^\/files-pri\/([A-Z0-9]+)-(F\d+)\//.exec(path);
    const kept = match ? this.kept.get(match[2] as string) : undefined;
    const header = req.headers.authorization;
    const bearer = header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
    const authorized = kept !== undefined && bearer !== undefined && teamOf(bearer) === kept.team;
    if (match) {
      this.downloads.push({
        fileId: match[2] as string,
        authorized,
        hadAuthorization: header !== undefined,
      });
    }
    if (kept === undefined || !authorized) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(SIGN_IN_PAGE);
      return;
    }
    if (kept.redirectTo !== undefined) {
      res.writeHead(302, { location: kept.redirectTo });
      res.end();
      return;
    }
    res.writeHead(200, {
      "content-type": String(kept.object.mimetype),
      "content-length": String(kept.content.length),
    });
    res.end(kept.content);
  }
}

/** Slack's filetype for a name's ending, as far as the tests need it. */
function typeOf(name: string): string {
  const ending = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  const types: Record<string, string> = {
    txt: "text",
    md: "markdown",
    py: "python",
    ts: "typescript",
    js: "javascript",
    csv: "csv",
    json: "json",
    yaml: "yaml",
    yml: "yaml",
    log: "text",
    pdf: "pdf",
    png: "png",
    jpg: "jpg",
    zip: "zip",
  };
  return (ending && types[ending]) ?? "binary";
}
