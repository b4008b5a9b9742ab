/**
 * What goes wrong between the bot and PostgreSQL. Messages never hold the connection URL
 * (it may carry a password): they name the server by host and database at most.
 */
export class PostgresError extends Error {
  constructor(
    message: string,
    /** PostgreSQL's SQLSTATE (`23505`, `57014` …), or Node's (`ECONNREFUSED` …); none for our own. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "PostgresError";
  }
}

/** The database could not be opened (unreachable, refused, or its schema is too new). */
export class PostgresOpenError extends Error {
  constructor(where: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Cannot open the PostgreSQL database ${where}: ${reason}`, { cause });
    this.name = "PostgresOpenError";
  }
}

/**
 * Where a URL points, without its credentials: `host:port/database`, for messages that must
 * say which server without giving its password away.
 */
export function describeServer(url: string): string {
  try {
    const parsed = new URL(url);
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || "(default)";
    return `at ${parsed.hostname}${parsed.port ? `:${parsed.port}` : ""}/${database}`;
  } catch {
    return "(its URL could not be read)";
  }
}

/** `message` with the URL, and its password, blotted out wherever they appear. */
export function redact(message: string, url: string): string {
  let out = message.split(url).join("[database url]");
  const password = passwordOf(url);
  // A very short password would blot out ordinary words: such a secret is no secret anyway.
  if (password.length >= 4) out = out.split(password).join("[password]");
  return out;
}

function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}
