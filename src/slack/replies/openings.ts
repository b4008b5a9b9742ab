/** One reply's place among its channel's openings (Openings.join). */
export interface Opening {
  /** Replies of the channel that opened before this one and have not posted yet. */
  ahead: number;
  /** Settles once the reply that opened just before this one has queued its post. */
  after: Promise<void>;
  /** This reply's post is queued (the next reply's `after`). */
  queued(): void;
  /** This reply's first message is posted, or will not be. */
  leave(): void;
}

interface Channel {
  open: number;
  tail: Promise<void>;
}

/**
 * The edited replies whose first message is still to be posted, per channel, in the order
 * they opened: how many are ahead of a new one, and its turn to queue its post behind theirs
 * (a reply that waits for its first words queues its post only once they come).
 */
export class Openings {
  private readonly channels = new Map<string, Channel>();

  join(channel: string): Opening {
    let place = this.channels.get(channel);
    if (!place) {
      place = { open: 0, tail: Promise.resolve() };
      this.channels.set(channel, place);
    }
    const here = place;
    const ahead = here.open++;
    const after = here.tail;
    let queued: () => void = () => undefined;
    here.tail = new Promise<void>((resolve) => {
      queued = () => resolve();
    });
    let left = false;
    return {
      ahead,
      after,
      queued,
      leave: () => {
        if (left) return;
        left = true;
        queued();
        if (--here.open === 0 && this.channels.get(channel) === here) {
          this.channels.delete(channel);
        }
      },
    };
  }
}
