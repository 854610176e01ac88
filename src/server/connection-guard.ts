/**
 * The front door's connections, kept so that a slow client cannot take the listener: clients
 * that open many connections from many addresses and send their requests a byte at a time (a
 * slowloris) would otherwise fill `maxConnections`, and the probes could no longer connect.
 *
 * Each connection is either *waiting* (accepted, or its last answer sent, and no whole request
 * since: its headers or its body still coming, or idle between requests) or *busy* (a whole
 * request received, its answer under way). At the limit, a new connection closes the one that has
 * waited longest, never itself: a probe's request arrives whole at once and is answered at once,
 * so it is never the oldest waiting, while an attacker's trickle always is. Only when none waits
 * (every connection busy with a whole request: the console's, relayed to a blocked main thread)
 * the oldest busy one goes. A client address holding its share already has its new connection
 * closed instead (`maxConnectionsPerClient`).
 *
 * Node's own `headersTimeout` and `requestTimeout` close a connection whose request does not
 * arrive in time; a sweep every `checkIntervalMs` closes any waiting longer than `requestTimeoutMs`
 * too, so that bound holds whatever Node's checks do.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ListenerLimits } from './front-door-protocol.js';

/** A warning to the daemon's log, as the front door's thread sends it (the guard's and the relay's). */
export type Log = (level: 'warn', fields: Record<string, unknown>, msg: string) => void;

/** Guards a server's connections (see the file's comment); `stop()` ends its sweep. */
export class ConnectionGuard {
  /** Waiting connections → since when (ms), oldest first (a Map keeps insertion order). */
  readonly #waiting = new Map<Socket, number>();
  /** Busy connections, oldest first. */
  readonly #busy = new Set<Socket>();
  readonly #perClient = new Map<string, number>();
  readonly #refused = new Set<string>();
  readonly #sweep: NodeJS.Timeout;
  #full = false;

  constructor(
    server: Server,
    private readonly limits: ListenerLimits,
    private readonly log: Log,
  ) {
    server.on('connection', (socket: Socket) => this.#accepted(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#request(req, res));
    this.#sweep = setInterval(() => this.#sweepStale(), limits.checkIntervalMs);
    this.#sweep.unref();
  }

  /** Connections open now. */
  get open(): number {
    return this.#waiting.size + this.#busy.size;
  }

  stop(): void {
    clearInterval(this.#sweep);
  }

  #accepted(socket: Socket): void {
    const client = socket.remoteAddress ?? 'unknown';
    const held = this.#perClient.get(client) ?? 0;
    if (held >= this.limits.maxConnectionsPerClient) {
      if (!this.#refused.has(client)) {
        this.#refused.add(client);
        this.log(
          'warn',
          { client, max: this.limits.maxConnectionsPerClient },
          `a client holds ${this.limits.maxConnectionsPerClient} connections to the listener; closing its new ones`,
        );
      }
      socket.destroy();
      return;
    }
    this.#perClient.set(client, held + 1);
    if (this.open >= this.limits.maxConnections) this.#makeRoom();
    this.#waiting.set(socket, Date.now());
    socket.once('close', () => {
      this.#forget(socket);
      const left = (this.#perClient.get(client) ?? 1) - 1;
      if (left > 0) this.#perClient.set(client, left);
      else {
        this.#perClient.delete(client);
        this.#refused.delete(client);
      }
      if (this.#full && this.open <= this.limits.maxConnections / 2) this.#full = false;
    });
  }

  /** Closes the connection that waited longest (or, none waiting, the oldest busy one). */
  #makeRoom(): void {
    const victim = this.#waiting.keys().next().value ?? this.#busy.values().next().value;
    if (!victim) return;
    if (!this.#full) {
      this.#full = true;
      this.log(
        'warn',
        { max: this.limits.maxConnections },
        `the listener holds ${this.limits.maxConnections} connections; closing the ones that waited longest without a whole request to make room`,
      );
    }
    this.#forget(victim);
    victim.destroy();
  }

  /** A request's headers arrived: the connection is busy once its body has too. */
  #request(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const bodiless = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
    if (bodiless || req.complete) this.#setBusy(socket);
    else req.once('end', () => this.#setBusy(socket));
    res.once('finish', () => {
      if (socket.destroyed || !this.#busy.has(socket)) return;
      this.#busy.delete(socket);
      this.#waiting.set(socket, Date.now());
    });
  }

  #setBusy(socket: Socket): void {
    if (!this.#waiting.delete(socket)) return;
    this.#busy.add(socket);
  }

  #forget(socket: Socket): void {
    this.#waiting.delete(socket);
    this.#busy.delete(socket);
  }

  /** Closes the connections that waited longer than a whole request may take. */
  #sweepStale(): void {
    const oldest = Date.now() - this.limits.requestTimeoutMs;
    for (const [socket, since] of this.#waiting) {
      if (since > oldest) break;
      this.#forget(socket);
      socket.destroy();
    }
  }
}
