import type { Config } from "../config.js";
import { type Logger, learnSecret } from "../logger.js";
import { Assistants } from "../people/assistants.js";
import { Identities } from "../people/identities.js";
import { LinkNotices, problemNote } from "../people/link-notices.js";
import { refusalConfirmed } from "../people/token-check.js";
import type { TokenOwner } from "../people/token-cipher.js";
import { TokenVault } from "../people/token-vault.js";
import type { ServiceClient } from "../service/client.js";
import type { NoteGate } from "../slack/calls/note-gate.js";
import type { Stores } from "../store/stores.js";
import type { Turn } from "../store/turn.js";

/**
 * The people side: their sealed tokens, who each request is sent as, the link problems to
 * tell them, and the assistants they may choose.
 */
export function wirePeople(
  config: Config,
  stores: Stores,
  logger: Logger,
  /**
   * The service client, wired after the people (its requests carry their identities): a 401
   * to a person's token is confirmed with it before the token is forgotten (token-check.ts).
   */
  service: () => ServiceClient,
) {
  const confirmRefusal = (owner: TokenOwner, token: string) =>
    refusalConfirmed(service(), {
      user: owner.user,
      token,
      sharedToken: config.service.token,
      assistantId: assistants.default.id,
      timeoutMs: 2_500,
    });
  const vault = new TokenVault({
    key: config.people.encryptionKey,
    store: stores.linkedTokens,
    onSecret: (token) => learnSecret(logger, token),
    onBroken: ({ user }) =>
      logger.warn(
        { user },
        "a linked token does not open with TOKEN_ENCRYPTION_KEY; treated as not linked",
      ),
  });
  const notices = new LinkNotices();
  const identities = new Identities({
    mode: config.people.identityMode,
    vault,
    sharedToken: config.service.token,
    confirmRefusal,
    onUnusable: (owner, problem) => {
      notices.add(owner, problem);
      if (problem === "refused") {
        logger.info(
          { user: owner.user },
          "the service refused a person's own token, and again when asked while it accepted the shared token; it is unlinked",
        );
      }
    },
    onRefusalUnconfirmed: (owner) =>
      logger.warn(
        { user: owner.user },
        "the service refused a person's own token, but asked again did not confirm it; it stays linked",
      ),
    onNotOwner: (asker, reason, threadOwner) => {
      notices.add(asker, { reason, threadOwner });
      logger.info(
        { user: asker.user, threadOwner, reason },
        "not sent: the conversation's service thread is not this person's to continue",
      );
    },
  });
  const assistants = new Assistants(config.people.assistants, stores.assistantChoices);
  return { vault, identities, notices, assistants };
}

export type People = ReturnType<typeof wirePeople>;

/**
 * When a turn ends: a person whose own token failed one of their turns, or who asked in a
 * conversation that is not theirs to continue, is told privately, once.
 */
export function tellLinkProblems(
  people: Pick<ReturnType<typeof wirePeople>, "notices">,
  notes: Pick<NoteGate, "tell">,
  linkTokenHelp: string,
): (turn: Turn) => void {
  return (turn) => {
    const problem = people.notices.take(turn.team, turn.user);
    if (problem === undefined) return;
    const { team, channel, user, threadTs } = turn;
    notes.tell({ team, channel, user, threadTs, text: problemNote(problem, linkTokenHelp) });
  };
}
