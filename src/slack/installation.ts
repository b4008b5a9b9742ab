import type { Identity } from "./web-api.js";

/**
 * The one installation this bot serves (it runs on one bot token), as auth.test names it.
 * Its workspace keys every conversation, turn, setting, deduplication and Slack budget,
 * whatever team a payload names: in a Slack Connect channel events, slash commands and
 * button presses name the person's own organisation, and keying by that would split one
 * Slack thread into two conversations and the workspace's Slack budget into several.
 *
 * Asked once and kept; a failed auth.test is not kept, so the next caller asks again.
 */
export class Installation {
  private identity: Promise<Identity> | undefined;

  constructor(private readonly authTest: () => Promise<Identity>) {}

  whoAmI(): Promise<Identity> {
    this.identity ??= this.authTest().catch((error: unknown) => {
      this.identity = undefined;
      throw error;
    });
    return this.identity;
  }

  /** The workspace every key uses. */
  async workspace(): Promise<string> {
    return (await this.whoAmI()).teamId;
  }
}
