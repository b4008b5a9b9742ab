// The acknowledgement timer of the bench (ack-sender.ts), in a thread of its own: it sends
// each signed event it is given and answers with the bot's status and how long the answer
// took, ms, measured here, where nothing else runs. Plain JavaScript: a worker thread does
// not load TypeScript under the bench's tsx on Node 20.
import { parentPort } from "node:worker_threads";

parentPort.on("message", async ({ id, url, headers, body, method = "POST" }) => {
  const started = performance.now();
  try {
    const response = await fetch(url, { method, headers, body });
    const ms = performance.now() - started;
    await response.arrayBuffer();
    parentPort.postMessage({ id, status: response.status, ms });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
});
