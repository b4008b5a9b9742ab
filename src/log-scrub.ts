/**
 * What no log line may carry: the secrets the settings hold, whatever their shape, and
 * anything shaped like a Slack token or a bearer credential. It is applied to each whole
 * line once pino has written it as JSON, so a secret is found wherever it sits: at any depth
 * of an object or array, in an error's message, stack or cause, in a library's own fields.
 */

/** Slack tokens and bearer credentials, configured or not (a user token in an error, say). */
const SHAPES = /\b(?:xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|Bearer\s+[^\s"'\\]+)/g;

/** A secret as it may appear in a line: as written, in a JSON string, in JSON quoted again. */
function forms(secret: string): string[] {
  const written = [secret];
  for (let depth = 0; depth < 2; depth++) {
    written.push(JSON.stringify(written.at(-1)).slice(1, -1));
  }
  return written;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A configured value shorter than this is not masked by value: masking every "t" of every
 * line for a one-letter test token would break every line's JSON, and a value that short
 * protects nothing. Real tokens are far longer.
 */
const MIN_SECRET_CHARS = 8;

/** A function that masks every one of `secrets` and every token shape in a text. */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const known = new KnownSecrets(secrets);
  return (text) => known.scrub(text);
}

/**
 * The secrets a logger masks, which may grow while the bot runs: a person's linked access
 * token is learnt the moment the bot holds it in clear (people/token-vault.ts).
 */
export class KnownSecrets {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | undefined;

  constructor(secrets: readonly string[] = []) {
    for (const secret of secrets) this.secrets.add(secret);
    this.build();
  }

  /** Masks `secret` in every line from now on. */
  learn(secret: string): void {
    if (secret.length < MIN_SECRET_CHARS || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    this.build();
  }

  scrub(text: string): string {
    // Configured secrets first and whole: a shape could otherwise stop inside one.
    const masked = this.pattern ? text.replace(this.pattern, "[redacted]") : text;
    return masked.replace(SHAPES, (match) => `${match.slice(0, 5)}…[redacted]`);
  }

  private build(): void {
    // Longest first, so the escaped form of a secret is taken whole, not its unescaped prefix.
    const usable = [...this.secrets].filter((s) => s.length >= MIN_SECRET_CHARS);
    const literal = [...new Set(usable.flatMap(forms))]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp);
    this.pattern = literal.length > 0 ? new RegExp(literal.join("|"), "g") : undefined;
  }
}
