/**
 * Waiting for a condition without polling: each waiter re-checks its condition whenever
 * the owner reports activity (a recorded call, a response, a socket ack).
 */
export class Waiters {
  private readonly checks = new Set<() => void>();

  /**
   * Resolves once `holds()` is true, checking now and after every {@link notify}; rejects
   * when `holds` throws, or after `timeoutMs` with the message `describeTimeout()` gives.
   */
  until(holds: () => boolean, timeoutMs: number, describeTimeout: () => string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (holds()) {
        resolve();
        return;
      }
      const finish = (error?: unknown): void => {
        clearTimeout(timer);
        this.checks.delete(check);
        if (error === undefined) resolve();
        else reject(error);
      };
      const check = (): void => {
        try {
          if (holds()) finish();
        } catch (error) {
          finish(error);
        }
      };
      const timer = setTimeout(() => finish(new Error(describeTimeout())), timeoutMs);
      this.checks.add(check);
    });
  }

  notify(): void {
    for (const check of [...this.checks]) check();
  }
}
