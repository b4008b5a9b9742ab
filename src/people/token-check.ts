import type { ServiceClient } from "../service/client.js";
import { ServiceError } from "../service/errors.js";

export type TokenVerdict = "ok" | "refused" | "unreachable";

/**
 * Checks a token before it is linked, with the cheapest authenticated request of the
 * interface: one page of the person's threads (GET /v1/threads). It is sent as that person
 * (the log names them), never kept if refused, and never reported anywhere.
 */
export async function checkToken(
  service: Pick<ServiceClient, "listThreads">,
  check: { user: string; token: string; assistantId: string; timeoutMs: number },
): Promise<TokenVerdict> {
  try {
    await service.listThreads(
      { assistantId: check.assistantId },
      {
        // Not yet the person's linked token: a refusal here unlinks nothing.
        credential: { identity: check.user, token: check.token, personal: false },
        maxPages: 1,
        signal: AbortSignal.timeout(check.timeoutMs),
      },
    );
    return "ok";
  } catch (error) {
    return error instanceof ServiceError && error.kind === "authentication"
      ? "refused"
      : "unreachable";
  }
}
