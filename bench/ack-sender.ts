import { Worker } from "node:worker_threads";
import { type Payload, signedRequest } from "../tools/slack-requests.js";

interface Answer {
  id: number;
  status?: number;
  ms?: number;
  error?: string;
}

/**
 * Sends the bench's signed events to the bot and times Slack's acknowledgement from a thread
 * of its own (ack-sender-worker.mjs). Timed in the bench's main thread, where the fake Slack
 * and the simulator answer hundreds of calls a second, an answer the bot sent at once could
 * wait there for tens of milliseconds before it was read; Slack's own senders do nothing else.
 */
export class AckSender {
  private readonly worker = new Worker(new URL("./ack-sender-worker.mjs", import.meta.url));
  private readonly waiting = new Map<number, (answer: Answer) => void>();
  private next = 0;

  constructor() {
    this.worker.on("message", (answer: Answer) => {
      this.waiting.get(answer.id)?.(answer);
      this.waiting.delete(answer.id);
    });
  }

  /**
   * GETs `url` once, so that the thread has loaded its HTTP client before the first event is
   * timed (it loads on the first request).
   */
  async warm(url: string): Promise<void> {
    await this.request({ url, method: "GET" });
  }

  /** POSTs `event` signed with `secret`; the time until the bot answered, ms. */
  send(url: string, secret: string, event: Payload): Promise<{ status: number; ms: number }> {
    const { headers, raw } = signedRequest(secret, "event", event);
    return this.request({ url, headers, body: raw });
  }

  private async request(request: object): Promise<{ status: number; ms: number }> {
    const id = this.next++;
    const answer = await new Promise<Answer>((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ id, ...request });
    });
    if (answer.error !== undefined) throw new Error(`could not reach the bot: ${answer.error}`);
    return { status: answer.status ?? 0, ms: answer.ms ?? Number.NaN };
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
