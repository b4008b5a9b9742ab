import type { InstallationKey } from "../../store/stores.js";
import { type Identity, type SlackWebApi, slackWebApi } from "../web-api/web-api.js";
import type { Installations } from "./installations.js";
import { NotInstalled } from "./installations.js";

/** Where a Slack request comes from, as Bolt's `context` tells it (its installation's workspace). */
export interface RequestPlace {
  teamId?: string | undefined;
  /** Its Enterprise org, when it is in one: an org-wide installation serves it. */
  enterpriseId?: string | undefined;
}

/**
 * The workspaces the bot serves, and the one of each request. A workspace keys every
 * conversation, turn, setting, deduplication and Slack budget, and its calls carry its own
 * bot token.
 */
export interface Workspaces {
  /** The workspace a request concerns: the one its keys use. */
  workspace(place: RequestPlace): Promise<string>;
  /** Who the bot is in a workspace (auth.test with its token), asked once and kept. */
  whoAmI(team: string): Promise<Identity>;
  /** The Web API of a workspace: its calls carry that workspace's bot token. */
  slack(team: string): SlackWebApi;
  /**
   * Forgets what is kept of the workspaces an installation served (it was removed): its own,
   * or for an org-wide one every workspace of the org a request has come from (to any
   * replica). Returns them.
   */
  forget(removed: InstallationKey): Promise<string[]>;
}

/**
 * The one installation a bot on SLACK_BOT_TOKEN serves, as auth.test names it. Its workspace
 * keys everything whatever team a payload names: in a Slack Connect channel events, slash
 * commands and button presses name the person's own organisation, and keying by that would
 * split one Slack thread into two conversations and the workspace's Slack budget into several.
 *
 * Asked once and kept; a failed auth.test is not kept, so the next caller asks again.
 */
export class Installation implements Workspaces {
  private identity: Promise<Identity> | undefined;

  constructor(private readonly api: SlackWebApi) {}

  whoAmI(_team?: string): Promise<Identity> {
    this.identity ??= this.api.authTest().catch((error: unknown) => {
      this.identity = undefined;
      throw error;
    });
    return this.identity;
  }

  /** The workspace every key uses, whatever the request names. */
  async workspace(_place?: RequestPlace): Promise<string> {
    return (await this.whoAmI()).teamId;
  }

  slack(_team: string): SlackWebApi {
    return this.api;
  }

  async forget(_removed: InstallationKey): Promise<string[]> {
    return [];
  }
}

/**
 * Many workspaces (OAuth): each request is the workspace Bolt authorized it for (an org-wide
 * installation serves every workspace of its org, each keyed by its own id), and each
 * workspace's calls carry its installation's bot token, looked up as they are made: once a
 * workspace is uninstalled its calls fail (NotInstalled) without reaching Slack.
 */
export class ManyInstallations implements Workspaces {
  private readonly apis = new Map<string, SlackWebApi>();
  private readonly identities = new Map<string, Promise<Identity>>();
  /**
   * The org of each workspace requests came from: a workspace served by its org's org-wide
   * installation is found through it. Recorded with the installations too, once per workspace
   * and process, so that after a restart an answer resumed there finds its installation before
   * any request of the workspace arrives.
   */
  private readonly orgs = new Map<string, string>();

  constructor(
    private readonly client: Parameters<typeof slackWebApi>[0],
    private readonly installations: Pick<Installations, "find" | "placeWorkspace" | "workspacesOf">,
  ) {}

  async workspace(place: RequestPlace): Promise<string> {
    const { teamId: team, enterpriseId: org } = place;
    if (!team) throw new NotInstalled({});
    if (org && this.orgs.get(team) !== org) {
      await this.installations.placeWorkspace(team, org);
      this.orgs.set(team, org);
    }
    return team;
  }

  whoAmI(team: string): Promise<Identity> {
    let identity = this.identities.get(team);
    if (identity === undefined) {
      identity = this.slack(team)
        .authTest()
        .catch((error: unknown) => {
          this.identities.delete(team);
          throw error;
        });
      this.identities.set(team, identity);
    }
    return identity;
  }

  slack(team: string): SlackWebApi {
    let api = this.apis.get(team);
    if (api === undefined) {
      api = slackWebApi(this.client, async () => {
        const bot = await this.installations.find({ team, enterprise: this.orgs.get(team) });
        if (bot === undefined) throw new NotInstalled({ team });
        return bot.token;
      });
      this.apis.set(team, api);
    }
    return api;
  }

  async forget(removed: InstallationKey): Promise<string[]> {
    const teams =
      removed.team !== ""
        ? [removed.team]
        : (await this.installations.workspacesOf(removed.enterprise)).sort();
    for (const team of teams) this.identities.delete(team);
    return teams;
  }
}
