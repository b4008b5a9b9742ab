import { existsSync } from "node:fs";
import { runRotation } from "./rotate-key.js";

/** Entry point of `npm run rotate-key` (see rotate-key.ts); a .env file is read when present. */
if (existsSync(".env")) process.loadEnvFile(".env");
const { code, line } = await runRotation(process.env);
(code === 0 ? process.stdout : process.stderr).write(`${line}\n`);
process.exit(code);
