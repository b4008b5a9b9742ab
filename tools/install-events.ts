/**
 * Events about the app's installation as Slack shapes them (the `event` inside the
 * envelope, which names the installation they concern): the app removed from a workspace,
 * and tokens revoked. Bolt runs no `authorize` for either: the installation may be gone.
 */
import { nextTs, type Payload } from "./slack-events.js";

/** `app_uninstalled`: the app was removed; every token of the installation is revoked. */
export function appUninstalled(): Payload {
  return { type: "app_uninstalled", event_ts: nextTs() };
}

/** `tokens_revoked`: these tokens no longer work, named by their user ids (bot and people). */
export function tokensRevoked(tokens: { bot?: string[]; oauth?: string[] }): Payload {
  return {
    type: "tokens_revoked",
    tokens: { oauth: tokens.oauth ?? [], bot: tokens.bot ?? [] },
    event_ts: nextTs(),
  };
}
