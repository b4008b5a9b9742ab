import { existsSync } from "node:fs";
import { createBot } from "./bot.js";
import { ConfigError, configuredSecrets, loadConfig } from "./config.js";
import { createLogger } from "./logger.js";

/** Entry point of `npm start`: reads the settings, starts the bot, stops it cleanly. */
async function main(): Promise<void> {
  // A .env file beside the project is loaded when present (real variables win).
  if (existsSync(".env")) process.loadEnvFile(".env");
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, secrets: configuredSecrets(config) });
  const bot = await createBot(config, logger);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping: finishing answers in progress");
    bot.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: String(error) }, "error while stopping");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  await bot.start();
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`The bot could not start: ${message}\n`);
  process.exit(1);
});
