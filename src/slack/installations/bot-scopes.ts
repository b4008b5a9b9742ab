/**
 * The bot scopes the app asks for when a workspace installs it through the OAuth flow: the
 * same as manifest.yml's `oauth_config.scopes.bot` (a test keeps them equal), which is what
 * an operator's app is created with.
 */
export const BOT_SCOPES: readonly string[] = [
  "app_mentions:read",
  "chat:write",
  "commands",
  "im:history",
  "channels:history",
  "groups:history",
  "mpim:history",
  "users:read",
  "files:read",
  "assistant:write",
];
