// One polling loop for every part of the panel: `tick` runs now, then every `intervalMs` while started,
// and a tick that is still waiting for the server is never overlapped by the next one.
export class Poller {
  private timer: number | undefined;
  private inflight = false;

  constructor(
    private tick: () => Promise<void>,
    private intervalMs: number
  ) {}

  start(): void {
    if (this.timer === undefined) {
      void this.run();
      this.timer = window.setInterval(() => void this.run(), this.intervalMs);
    }
  }

  stop(): void {
    if (this.timer !== undefined) {
      window.clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  async run(): Promise<void> {
    if (this.inflight) {
      return;
    }
    this.inflight = true;
    try {
      await this.tick();
    } finally {
      this.inflight = false;
    }
  }
}
