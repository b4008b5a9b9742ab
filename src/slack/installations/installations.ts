import type {
  Installation as BoltInstallation,
  InstallationQuery as BoltQuery,
  InstallationStore as BoltStore,
} from "@slack/bolt";
import type {
  InstallationKey,
  InstallationQuery,
  InstallationStore,
  StoredInstallation,
} from "../../store/stores.js";
import { BotTokenSealBroken, openBotToken, sealBotToken } from "./bot-token-seal.js";

/** What the calls in one workspace need: the bot token of its installation and who the bot is. */
export interface InstalledBot {
  /** The installation serving the workspace (an org-wide one has team ""). */
  key: InstallationKey;
  token: string;
  botUserId: string;
  botId: string;
}

export interface InstallationsOptions {
  store: InstallationStore;
  /** TOKEN_ENCRYPTION_KEY: bot tokens are kept only sealed under it. */
  key: Buffer;
  /** Told each bot token in clear the moment it is held, so the log scrubber masks it. */
  onSecret?: (token: string) => void;
  /** A sealed token that does not open (the key changed without a rotation): for the log. */
  onBroken?: (key: InstallationKey) => void;
  /** The clock an opened installation ages on, epoch ms; default Date.now. */
  now?: () => number;
}

/**
 * How long an opened installation is used before the store is read again, ms: a reinstall or
 * an uninstall made through another replica reaches this one within it.
 */
const KEPT_MS = 30_000;

/** What a call refused by NotInstalled is coded as (call-failure.ts: permanent, never retried). */
export const NOT_INSTALLED_CODE = "slack_not_installed";

/**
 * No installation serves the workspace (never installed, or uninstalled): its calls fail
 * before they leave, and are never retried.
 */
export class NotInstalled extends Error {
  readonly code = NOT_INSTALLED_CODE;

  constructor(query: InstallationQuery) {
    super(`no installation of the app serves ${query.team || query.enterprise || "this request"}`);
    this.name = "NotInstalled";
  }
}

/**
 * The app's installations (many workspaces, OAuth): sealed in the store, opened when a
 * workspace's call needs its bot token, and kept opened per workspace for KEPT_MS, or until an
 * install or an uninstall here changes what is stored (Bolt asks for an installation on every
 * event). A workspace not found is not remembered: it may be installed through another copy
 * of the bot.
 */
export class Installations {
  private readonly opened = new Map<string, { bot: InstalledBot; until: number }>();
  /** Moves on at each install or uninstall made here (find keeps nothing read across one). */
  private generation = 0;

  constructor(private readonly options: InstallationsOptions) {}

  /** The bot serving a workspace (its own installation, else its org's org-wide one). */
  async find(query: InstallationQuery): Promise<InstalledBot | undefined> {
    const cacheKey = `${query.enterprise ?? ""}\u0000${query.team ?? ""}`;
    const now = (this.options.now ?? Date.now)();
    const kept = this.opened.get(cacheKey);
    if (kept !== undefined && kept.until > now) return kept.bot;
    this.opened.delete(cacheKey);
    const generation = this.generation;
    const row = await this.options.store.find(query);
    const bot = row && this.open(row);
    // Not kept when an install or uninstall here changed what is stored while it was read.
    if (bot !== undefined && generation === this.generation) {
      this.opened.set(cacheKey, { bot, until: now + KEPT_MS });
    }
    return bot;
  }

  /** Keeps an installation (the install flow, or SLACK_BOT_TOKEN's workspace), sealing its token. */
  async save(
    installation: Omit<StoredInstallation, "sealedBotToken" | "installedAt">,
    token: string,
  ): Promise<void> {
    const key = { enterprise: installation.enterprise, team: installation.team };
    this.options.onSecret?.(token);
    await this.options.store.put({
      ...installation,
      sealedBotToken: sealBotToken(this.options.key, key, token),
    });
    this.forgetOpened();
  }

  /** Records the org a request of workspace `team` named (InstallationStore.placeWorkspace). */
  placeWorkspace(team: string, enterprise: string): Promise<void> {
    return this.options.store.placeWorkspace(team, enterprise);
  }

  /** The workspaces recorded in an org. */
  workspacesOf(enterprise: string): Promise<string[]> {
    return this.options.store.workspacesOf(enterprise);
  }

  /** Forgets an installation (app_uninstalled, tokens_revoked); whether there was one. */
  async remove(key: InstallationKey): Promise<boolean> {
    const removed = await this.options.store.remove(key);
    this.forgetOpened();
    return removed;
  }

  /** What was opened is read again; a read under way when this happened is not kept. */
  private forgetOpened(): void {
    this.opened.clear();
    this.generation++;
  }

  /** Bolt's installation store over this one: the install flow saves, `authorize` finds. */
  forBolt(): BoltStore {
    return {
      storeInstallation: async (installation) => this.save(...fromBolt(installation)),
      fetchInstallation: async (query) => {
        const wanted = queryOf(query);
        const bot = await this.find(wanted);
        if (bot === undefined) throw new NotInstalled(wanted);
        return toBolt(bot, query);
      },
      deleteInstallation: async (query) => {
        const bot = await this.find(queryOf(query));
        if (bot !== undefined) await this.remove(bot.key);
      },
    };
  }

  private open(row: StoredInstallation): InstalledBot | undefined {
    const key = { enterprise: row.enterprise, team: row.team };
    try {
      const token = openBotToken(this.options.key, key, row.sealedBotToken);
      this.options.onSecret?.(token);
      return { key, token, botUserId: row.botUserId, botId: row.botId };
    } catch (error) {
      if (!(error instanceof BotTokenSealBroken)) throw error;
      this.options.onBroken?.(key);
      return undefined;
    }
  }
}

/** Bolt's query as ours: an org-wide install is asked for by its org alone. */
function queryOf(query: BoltQuery<boolean>): InstallationQuery {
  return query.isEnterpriseInstall
    ? { enterprise: query.enterpriseId }
    : { team: query.teamId, enterprise: query.enterpriseId };
}

/** What the install flow gives, as the row to keep and the token to seal. */
function fromBolt(
  installation: BoltInstallation,
): [Omit<StoredInstallation, "sealedBotToken" | "installedAt">, string] {
  const { bot, enterprise, team } = installation;
  // The bridge answers as a bot: an install that granted none cannot be used.
  if (bot === undefined) throw new Error("the installation carries no bot token");
  const orgWide = installation.isEnterpriseInstall === true;
  return [
    {
      enterprise: enterprise?.id ?? "",
      team: orgWide ? "" : (team?.id ?? ""),
      teamName: orgWide ? null : (team?.name ?? null),
      enterpriseName: enterprise?.name ?? null,
      appId: installation.appId ?? null,
      botUserId: bot.userId,
      botId: bot.id,
      botScopes: bot.scopes,
      installerUserId: installation.user.id,
    },
    bot.token,
  ];
}

/** The installation as Bolt's `authorize` reads it: the bot's token and ids. */
function toBolt(bot: InstalledBot, query: BoltQuery<boolean>): BoltInstallation {
  const orgWide = bot.key.team === "";
  return {
    team: orgWide ? undefined : { id: bot.key.team },
    enterprise: bot.key.enterprise === "" ? undefined : { id: bot.key.enterprise },
    user: { id: query.userId ?? "", token: undefined, scopes: undefined },
    bot: { token: bot.token, id: bot.botId, userId: bot.botUserId, scopes: [] },
    tokenType: "bot",
    isEnterpriseInstall: orgWide,
    authVersion: "v2",
  } as BoltInstallation;
}
