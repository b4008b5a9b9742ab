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

/**
 * Whether the service's 401 to a person's linked token is theirs to lose, asked just after
 * it: the same cheap request with their token is refused again, and with the shared token
 * (ASSISTANT_API_TOKEN) it is accepted, so the service authenticates others and refuses this
 * token. Any other answer keeps the token linked: accepted now (a passing fault), every token
 * refused (an authentication incident at the service, which must not unlink everyone who
 * asks during it), or no answer at all.
 */
export async function refusalConfirmed(
  service: Pick<ServiceClient, "listThreads">,
  check: {
    user: string;
    token: string;
    sharedToken: string;
    assistantId: string;
    timeoutMs: number;
  },
): Promise<boolean> {
  const { user, token, sharedToken, assistantId, timeoutMs } = check;
  if ((await checkToken(service, { user, token, assistantId, timeoutMs })) !== "refused") {
    return false;
  }
  const shared = { user: "shared", token: sharedToken, assistantId, timeoutMs };
  return (await checkToken(service, shared)) === "ok";
}
