/**
 * The vocabulary the answer generator draws from. Plain data, kept apart from the
 * generator so that the generator reads as an algorithm.
 */

export interface AnswerTopic {
  title: string;
  subject: string;
  slug: string;
  terms: readonly string[];
  identifiers: readonly string[];
  /** The fenced code block's info string. */
  language: string;
  /** The code block's body: a template literal, so that it reads as the code it shows. */
  code: string;
}

export const TOPICS: readonly AnswerTopic[] = [
  {
    title: "Retrying HTTP requests",
    subject: "retrying requests",
    slug: "retries",
    terms: ["exponential backoff", "idempotency", "jitter", "timeouts", "the Retry-After header"],
    identifiers: ["maxRetries", "retryAfter", "fetchWithRetry", "baseDelayMs"],
    language: "ts",
    code: `async function fetchWithRetry(url: string, maxRetries = 3): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url);
    if (response.status < 500 || attempt >= maxRetries) return response;
    await new Promise((r) => setTimeout(r, 2 ** attempt * 250));
  }
}`,
  },
  {
    title: "Caching API responses",
    subject: "caching",
    slug: "caching",
    terms: ["cache invalidation", "time-to-live", "stale-while-revalidate", "cache keys"],
    identifiers: ["ttlSeconds", "cache.get", "Cache-Control", "etag"],
    language: "python",
    code: `from functools import lru_cache

@lru_cache(maxsize=1024)
def load_profile(user_id: str) -> dict:
    return api.get(f"/users/{user_id}").json()`,
  },
  {
    title: "Running database migrations",
    subject: "schema migrations",
    slug: "migrations",
    terms: ["backward compatibility", "transactions", "online index builds", "rollbacks"],
    identifiers: ["schema_version", "ALTER TABLE", "migrate up", "user_version"],
    language: "sql",
    code: `BEGIN;
ALTER TABLE orders ADD COLUMN shipped_at TIMESTAMP NULL;
CREATE INDEX idx_orders_shipped_at ON orders (shipped_at);
COMMIT;`,
  },
  {
    title: "Rate limiting an API",
    subject: "rate limiting",
    slug: "rate-limits",
    terms: ["sliding windows", "token buckets", "per-user quotas", "burst capacity"],
    identifiers: ["requestsPerMinute", "429", "windowMs", "limiter.take"],
    language: "ts",
    code: `const recent = log.filter((t) => t > now - windowMs);
if (recent.length >= limit) {
  return { ok: false, retryAfterMs: recent[0] + windowMs - now };
}
recent.push(now);`,
  },
  {
    title: "Structured logging",
    subject: "logging",
    slug: "logging",
    terms: ["log levels", "correlation ids", "redaction", "sampling"],
    identifiers: ["logger.child", "requestId", "LOG_LEVEL", "pino"],
    language: "json",
    code: `{
  "level": "info",
  "msg": "order shipped",
  "requestId": "3f2a9c",
  "durationMs": 42
}`,
  },
  {
    title: "Deploying with containers",
    subject: "container deployments",
    slug: "deployments",
    terms: ["health checks", "rolling updates", "resource limits", "image tags"],
    identifiers: ["docker build", "HEALTHCHECK", "replicas", "readinessProbe"],
    language: "bash",
    code: `docker build -t shop/api:1.4.2 .
docker run --rm -p 8080:8080 \\
  --memory 512m shop/api:1.4.2`,
  },
];

/** Sentences for paragraphs; `{t}`/`{u}` are terms, `{s}` the subject, `{i}` an identifier. */
export const SENTENCES: readonly string[] = [
  "In practice, {t} and {u} interact — tuning one changes how the other behaves.",
  "Most teams keep the defaults at first and measure before they change {t}.",
  "A common mistake is to treat {t} as an afterthought, when it shapes the whole design.",
  "If something looks wrong in production, look at {i} first and then at {u}.",
  "Keep the configuration in one place so that the handling of {t} stays consistent.",
  "This is a trade-off between simplicity and control rather than a fixed rule.",
  "For small workloads the difference is negligible; at scale it matters a lot.",
  "Write the decision down next to the code, because the details of {t} surprise newcomers.",
  "Getting {s} right is mostly about making failure cheap and visible.",
  "Once {t} is in place, the rest of {s} becomes much easier to reason about.",
  "The numbers depend on your traffic, so treat any default as a starting point.",
  "Tests that exercise {u} catch most regressions before they reach users.",
];

export const BULLET_CLAUSES: readonly string[] = [
  "decide it explicitly instead of relying on defaults",
  "measure it before and after every change",
  "keep it observable with a metric and a log line",
  "make it configurable per environment",
  "document the reasoning → future readers will thank you",
  "test the failure path, not only the happy path",
];

export const STEPS: readonly string[] = [
  "Measure the current behaviour of {t}.",
  "Add {i} behind a flag so you can switch it off quickly.",
  "Roll the change out gradually and watch the error rate.",
  "Write a test that covers {u}.",
  "Review the dashboards after a day and adjust the limits.",
  "Remove the flag once the new behaviour has proven itself.",
];

export const SUBHEADINGS: readonly string[] = [
  "Things to watch",
  "A worked example",
  "Edge cases",
  "When not to do this",
  "Operational notes",
];

/**
 * Markup-free sentences that end an answer at its length: whole sentences are fitted into
 * the room left, so the answer never stops mid-sentence. The short ones close small gaps.
 */
export const FILLER_SENTENCES: readonly string[] = [
  "That covers the essentials.",
  "Start small and iterate from there.",
  "Measure first, then decide.",
  "Each environment may need slightly different values.",
  "Revisit the choice when the traffic pattern changes.",
  "Ask again if you want a deeper look at any of these steps.",
  "The defaults are a reasonable place to begin.",
  "Keep an eye on the error rate after the change.",
  "Hope this helps.",
  "Good luck!",
  "Test it.",
  "Sure.",
  "OK.",
];
