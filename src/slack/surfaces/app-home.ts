import { z } from "zod";
import type { IdentityMode } from "../../config-people.js";
import type { Logger } from "../../logger.js";
import type { Assistants } from "../../people/assistants.js";
import type { TokenVault } from "../../people/token-vault.js";
import type { Credential } from "../../service/credential.js";
import { oldestFirst } from "../../service/paging.js";
import type { ConversationStore, SettingsStore, TurnStore } from "../../store/stores.js";
import type { Gatekeeping } from "../admission/admission.js";
import type { BoltApp } from "../installations/app.js";
import type { RequestPlace } from "../installations/installation.js";
import type { Identity, SlackWebApi } from "../web-api/web-api.js";
import {
  HOME_DM_ASSISTANT_ACTION,
  HOME_FILTER_ACTION,
  HOME_LINK_ACTION,
  HOME_PAGE_ACTION,
  HOME_UNLINK_ACTION,
  type HomeState,
  type HomeThread,
  homeView,
} from "./home-view.js";
import { linkForm } from "./link-form.js";

export interface AppHomeDeps extends Gatekeeping {
  vault: Pick<TokenVault, "enabled" | "tokenOf" | "unlink">;
  mode: IdentityMode;
  assistants: Assistants;
  settings: Pick<SettingsStore, "allFor">;
  conversations: Pick<ConversationStore, "byServiceThread" | "byId">;
  /** Which conversations a person asked in: a Home listed with the shared token shows only those. */
  turns: Pick<TurnStore, "conversationsAskedIn">;
  /**
   * GET /v1/threads with this credential (undefined: the shared token), every page (the
   * service client).
   */
  listThreads: (
    filter: { assistantId: string },
    credential: Credential | undefined,
  ) => Promise<{ id: string; title?: string | null | undefined }[]>;
  /** The Web API of a workspace. */
  slack: (team: string) => Pick<SlackWebApi, "publishView" | "openView">;
  /** auth.test in a workspace: its address, for links to threads. */
  whoAmI: (team: string) => Promise<Identity>;
  /** LINK_TOKEN_HELP, for the form the Home's Link button opens. */
  help: string;
  logger: Logger;
}

/** Which page of which assistant's conversations a Home shows. */
export interface HomePage {
  page: number;
  filter?: string | undefined;
}

const PageValue = z.object({ page: z.number().int().min(0), filter: z.string().optional() });
const HomeOpened = z.object({ user: z.string().min(1), tab: z.string().optional() });

/**
 * The app's Home tab (`app_home_opened` with `tab: "home"`, `views.publish`): whether the
 * person's token is linked, with a button to link or unlink it, their settings per channel,
 * their assistant for DMs, and their recent conversations, paged, each linked to its Slack
 * thread where the bot knows it. A linked person's are listed with their own token (the
 * service lists only theirs); anyone else's with the shared token, whose list holds everyone's
 * threads, so only the threads of conversations the person asked in are shown.
 */
export class AppHome {
  constructor(readonly deps: AppHomeDeps) {}

  /** Per person, the newest publish asked for: an older one still being made is dropped. */
  private readonly newest = new Map<string, number>();

  /**
   * Publishes the person's Home again; failures are logged (the Home is a view, not an
   * answer). A publish that a newer one overtook while it read its state (a link's, then an
   * unlink pressed at once) is not sent: it would show what is no longer so.
   */
  async publish(team: string, user: string, at: HomePage = { page: 0 }): Promise<void> {
    const key = `${team}/${user}`;
    const generation = (this.newest.get(key) ?? 0) + 1;
    this.newest.set(key, generation);
    try {
      const view = homeView(await this.state(team, user, at));
      if (this.newest.get(key) !== generation) return;
      await this.deps.slack(team).publishView({ user_id: user, view });
    } catch (error) {
      this.deps.logger.warn({ err: String(error), user }, "could not publish the App Home");
    }
  }

  private async state(team: string, user: string, at: HomePage): Promise<HomeState> {
    const { vault, assistants } = this.deps;
    const token = vault.enabled ? await vault.tokenOf({ team, user }) : undefined;
    const dmAssistant = await assistants.forPerson(team, user);
    const filter = (at.filter && assistants.find(at.filter)) || dmAssistant;
    const listed = await this.threads(team, user, token, filter.id);
    return {
      linking: !vault.enabled ? "off" : token === undefined ? "unlinked" : "linked",
      mode: this.deps.mode,
      assistants: assistants.list,
      dmAssistant,
      settings: await this.settingsOf(team, user),
      filter,
      page: at.page,
      ...listed,
    };
  }

  /** The person's settings per channel, with the assistant each channel talks to. */
  private async settingsOf(team: string, user: string): Promise<HomeState["settings"]> {
    const rows = await this.deps.settings.allFor(team, user);
    const settings: HomeState["settings"][number][] = [];
    for (const row of rows) {
      const assistant = (await this.deps.assistants.forChannel(team, row.channel)).label;
      settings.push({ ...row, assistant });
    }
    return settings;
  }

  /**
   * The person's conversations, newest first: with their own token when linked; else with the
   * shared token (where people may ask with it: not in `personal` mode), of which only the
   * threads of conversations this person asked in are shown, never anyone else's.
   */
  private async threads(
    team: string,
    user: string,
    token: string | undefined,
    assistantId: string,
  ): Promise<Pick<HomeState, "threads" | "threadsNote">> {
    if (token === undefined && this.deps.mode === "personal") {
      return {
        threads: undefined,
        threadsNote:
          "Link your own access token to see your conversations with the assistant here.",
      };
    }
    // Listed with the shared token: only the service threads of this person's conversations.
    const mine = token === undefined ? await this.askedIn(team, user) : undefined;
    if (mine?.size === 0) return { threads: [] };
    try {
      const credential =
        token === undefined ? undefined : { identity: user, token, personal: true };
      const listed = await this.deps.listThreads({ assistantId }, credential);
      const found = mine ? listed.filter((thread) => mine.has(thread.id)) : listed;
      const base = (await this.deps.whoAmI(team)).url;
      const threads: HomeThread[] = [];
      // One look-up at a time: a long list must not take every connection of a pool at once.
      for (const thread of oldestFirst(found).reverse()) {
        threads.push({
          id: thread.id,
          title: thread.title ?? undefined,
          createdAt: createdAtOf(thread),
          slackUrl: await this.slackUrl(base, thread.id),
        });
      }
      return { threads };
    } catch (error) {
      this.deps.logger.warn(
        { err: String(error), user },
        "could not list a person's conversations",
      );
      return {
        threads: undefined,
        threadsNote: "The assistant service could not list your conversations just now.",
      };
    }
  }

  /** The service threads of the conversations this person asked in, in this workspace. */
  private async askedIn(team: string, user: string): Promise<Set<string>> {
    const { turns, conversations } = this.deps;
    const threads = new Set<string>();
    for (const id of await turns.conversationsAskedIn(team, user)) {
      const thread = (await conversations.byId(id))?.serviceThreadId;
      if (thread) threads.add(thread);
    }
    return threads;
  }

  private async slackUrl(
    base: string | undefined,
    serviceThreadId: string,
  ): Promise<string | undefined> {
    if (!base) return undefined;
    const conversation = await this.deps.conversations.byServiceThread(serviceThreadId);
    if (!conversation || !base) return undefined;
    const { channel, threadTs } = conversation;
    const root = base.endsWith("/") ? base : `${base}/`;
    return `${root}archives/${channel}/p${threadTs.replace(".", "")}?thread_ts=${threadTs}&cid=${channel}`;
  }
}

function createdAtOf(thread: object): number | undefined {
  const value = (thread as { createdAt?: unknown }).createdAt;
  const time =
    typeof value === "string" ? Date.parse(value) : typeof value === "number" ? value : Number.NaN;
  return Number.isFinite(time) ? time : undefined;
}

/** The Home's event and its buttons and selects. */
export function registerAppHome(app: BoltApp, home: AppHome): void {
  const { deps } = home;
  /** The workspace, if the person may use the bot there. */
  const admitted = async (place: RequestPlace, user: string, team: string | undefined) => {
    const workspace = await deps.installation.workspace(place);
    const refusal = await deps.admission(workspace).check({ user, team, enterprise: undefined });
    return refusal === undefined ? workspace : undefined;
  };
  app.event("app_home_opened", async ({ event, context }) => {
    const parsed = HomeOpened.safeParse(event);
    if (!parsed.success || parsed.data.tab !== "home") return;
    const team = await admitted(context, parsed.data.user, undefined);
    if (team !== undefined) void home.publish(team, parsed.data.user);
  });

  type Press = { ack: () => Promise<void>; body: unknown; action: unknown; context: RequestPlace };
  const onPress = (
    id: string | RegExp,
    act: (team: string, user: string, press: Press) => Promise<void>,
  ) =>
    app.action(id, async (press) => {
      await press.ack();
      const body = press.body as { user: { id: string; team_id?: string } };
      const team = await admitted(press.context, body.user.id, body.user.team_id);
      if (team === undefined) return;
      await act(team, body.user.id, press as unknown as Press).catch((error: unknown) => {
        deps.logger.warn({ err: String(error) }, "an App Home action failed");
      });
    });

  onPress(HOME_LINK_ACTION, async (team, _user, { body }) => {
    const trigger = (body as { trigger_id?: string }).trigger_id;
    if (trigger && deps.vault.enabled) {
      await deps.slack(team).openView({ trigger_id: trigger, view: linkForm(deps.help) });
    }
  });
  onPress(HOME_UNLINK_ACTION, async (team, user) => {
    await deps.vault.unlink({ team, user });
    await home.publish(team, user);
  });
  onPress(HOME_DM_ASSISTANT_ACTION, async (team, user, { action }) => {
    const chosen = deps.assistants.find(selected(action) ?? "");
    if (chosen) await deps.assistants.setForPerson(team, user, chosen);
    await home.publish(team, user);
  });
  onPress(HOME_FILTER_ACTION, async (team, user, { action }) => {
    await home.publish(team, user, { page: 0, filter: selected(action) });
  });
  onPress(new RegExp(`^${HOME_PAGE_ACTION}_`), async (team, user, { action }) => {
    const value = PageValue.safeParse(parseJson((action as { value?: string }).value));
    await home.publish(team, user, value.success ? value.data : { page: 0 });
  });
}

function selected(action: unknown): string | undefined {
  return (action as { selected_option?: { value?: string } }).selected_option?.value;
}

function parseJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? "");
  } catch {
    return undefined;
  }
}
