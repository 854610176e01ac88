/**
 * The process's SIGHUPs, kept from the moment they are listened for. `run` reloads its
 * configuration on SIGHUP; one that arrives while the daemon is still loading or starting must
 * wait for it, not kill the process (SIGHUP's default action). So `bin.ts` listens before anything
 * else is loaded, and `run` takes the hangups once it can reload: those that came early are
 * delivered then, as one reload (the file is read once, whatever number of signals asked).
 */
export class Hangups {
  #pending = 0;
  #listener: (() => void) | undefined;
  readonly #onSignal = () => this.receive();

  /**
   * Listens for the SIGHUPs of `proc` from now on; without one, hangups fed by hand (`receive`),
   * for a command run in-process.
   */
  constructor(private readonly proc?: NodeJS.Process) {
    proc?.on('SIGHUP', this.#onSignal);
  }

  /** One SIGHUP: handed to the listener, or kept until there is one. */
  receive(): void {
    if (this.#listener) this.#listener();
    else this.#pending++;
  }

  /** Calls `listener` on every SIGHUP from now on; those received before are delivered now, as one. */
  onHangup(listener: () => void): void {
    this.#listener = listener;
    if (this.#pending > 0) {
      this.#pending = 0;
      listener();
    }
  }

  /** Stops delivering (kept signals are dropped); the process listener, if any, is removed. */
  close(): void {
    this.#listener = undefined;
    this.#pending = 0;
    this.proc?.off('SIGHUP', this.#onSignal);
  }
}
