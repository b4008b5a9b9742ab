/**
 * The fake's installations: which bot token names which workspace, the install codes a test
 * hands out, `oauth.v2.access`, which turns a code into a bot token once (Slack's OAuth v2
 * exchange, with its checks and its answer's shape), and `auth.revoke`, which ends one token.
 * Tokens are kept only to route calls;
 * no recorded call or answer ever holds one, except the exchange's own answer to the bot.
 */
import { randomBytes } from "node:crypto";
import type { Args, SlackBody } from "./methods.js";
import type { FakeWorkspace, WorkspaceIdentity } from "./workspace.js";

/** The Slack app whose client id and secret `oauth.v2.access` checks. */
export interface FakeOAuthApp {
  clientId: string;
  clientSecret: string;
  /** Default "A1". */
  appId?: string;
}

export interface NewInstall extends Omit<WorkspaceIdentity, "teamId"> {
  /** The workspace; an org-wide install names its org (`enterpriseId`) instead. */
  teamId?: string;
  /** The person who installs the app. Default "UINSTALLER". */
  installerId?: string;
  /**
   * The `redirect_uri` the authorize step was given: the exchange must then name the same
   * one. Default none (any, or none, is accepted).
   */
  redirectUri?: string;
  /** The bot scopes granted. Default chat:write and app_mentions:read. */
  scopes?: string[];
}

interface PendingCode {
  teamId: string;
  installerId: string;
  redirectUri: string | undefined;
  scopes: string[];
  used: boolean;
}

/**
 * Which workspace serves a token, or the error Slack answers for it (with the workspace a
 * revoked token was issued for).
 */
export type Route =
  | { team: string }
  | { error: "invalid_auth" | "token_revoked"; team?: string | undefined };

const fail = (error: string): SlackBody => ({ ok: false, error });

export class Installs {
  private readonly codes = new Map<string, PendingCode>();
  /** Live bot tokens, by token: the team each serves. */
  private readonly tokens = new Map<string, string>();
  /** Tokens that no longer work, and the workspace each was issued for. */
  private readonly revoked = new Map<string, string>();
  /** Whether the first workspace, which answers any unknown token, was uninstalled. */
  private defaultGone = false;

  constructor(
    private readonly defaultTeam: string,
    /** The first workspace's one token; undefined: it serves any token not known otherwise. */
    private readonly defaultToken: string | undefined,
    private readonly app: FakeOAuthApp | undefined,
  ) {}

  /** A fresh code the redirect would carry after a person approved the install. */
  issueCode(teamId: string, install: NewInstall): string {
    const code = `code-${randomBytes(9).toString("hex")}`;
    this.codes.set(code, {
      teamId,
      installerId: install.installerId ?? "UINSTALLER",
      redirectUri: install.redirectUri,
      scopes: install.scopes ?? ["app_mentions:read", "chat:write"],
      used: false,
    });
    return code;
  }

  /** The workspace a bot token names, or why Slack refuses it. */
  route(token: string): Route {
    const gone = this.revoked.get(token);
    if (gone !== undefined) return { error: "token_revoked", team: gone };
    const team = this.tokens.get(token);
    if (team !== undefined) return { team };
    if (this.defaultToken !== undefined && token !== this.defaultToken) {
      return { error: "invalid_auth" };
    }
    return this.defaultGone ? { error: "token_revoked" } : { team: this.defaultTeam };
  }

  /** The live bot token of a workspace, if an install issued one. */
  tokenOf(teamId: string): string | undefined {
    for (const [token, team] of this.tokens) if (team === teamId) return token;
    return teamId === this.defaultTeam && !this.defaultGone ? this.defaultToken : undefined;
  }

  /** Every bot token an install issued the workspace, live or revoked. */
  issuedTo(teamId: string): string[] {
    return [...this.tokens, ...this.revoked]
      .filter(([, team]) => team === teamId)
      .map(([token]) => token);
  }

  /** `auth.revoke`: this one issued token stops working (`token_revoked`). */
  revokeToken(token: string): void {
    const team = this.tokens.get(token);
    if (team === undefined) return;
    this.tokens.delete(token);
    this.revoked.set(token, team);
  }

  /** Every token of the workspace stops working (an uninstall, a revocation). */
  revoke(teamId: string): void {
    for (const [token, team] of this.tokens) {
      if (team !== teamId) continue;
      this.tokens.delete(token);
      this.revoked.set(token, teamId);
    }
    if (teamId === this.defaultTeam) {
      this.defaultGone = true;
      if (this.defaultToken !== undefined) this.revoked.set(this.defaultToken, teamId);
    }
  }

  /**
   * `oauth.v2.access`: checks the app's credentials (form fields, or HTTP Basic as Slack
   * also takes them), the code (once) and the redirect URI, then issues the workspace a
   * new bot token, revoking its earlier one.
   */
  exchange(
    args: Args,
    basic: Credentials | undefined,
    workspaceOf: (team: string) => FakeWorkspace,
  ): SlackBody {
    const clientId = text(args.client_id) ?? basic?.id;
    const secret = text(args.client_secret) ?? basic?.secret;
    if (this.app === undefined || clientId !== this.app.clientId) return fail("invalid_client_id");
    if (secret !== this.app.clientSecret) return fail("bad_client_secret");
    const code = text(args.code);
    const pending = code === undefined ? undefined : this.codes.get(code);
    if (pending === undefined) return fail("invalid_code");
    if (pending.used) return fail("code_already_used");
    const redirect = text(args.redirect_uri);
    if (pending.redirectUri !== undefined && redirect !== pending.redirectUri) {
      return fail("bad_redirect_uri");
    }
    pending.used = true;
    this.revoke(pending.teamId);
    if (pending.teamId === this.defaultTeam) this.defaultGone = false;
    const token = `xoxb-${randomBytes(6).toString("hex")}-${randomBytes(12).toString("hex")}`;
    this.tokens.set(token, pending.teamId);
    const ws = workspaceOf(pending.teamId);
    const enterprise =
      ws.enterpriseId === undefined ? null : { id: ws.enterpriseId, name: ws.enterpriseName };
    return {
      ok: true,
      access_token: token,
      token_type: "bot",
      scope: pending.scopes.join(","),
      bot_user_id: ws.botUserId,
      app_id: this.app.appId ?? "A1",
      team: ws.orgWide ? null : { id: ws.teamId, name: ws.teamName },
      enterprise,
      is_enterprise_install: ws.orgWide,
      authed_user: { id: pending.installerId },
    };
  }

  clear(): void {
    this.codes.clear();
    this.tokens.clear();
    this.revoked.clear();
    this.defaultGone = false;
  }
}

/** Client credentials from an `Authorization: Basic` header. */
export interface Credentials {
  id: string;
  secret: string;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
