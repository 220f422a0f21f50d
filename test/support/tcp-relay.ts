/**
 * @module A loopback TCP relay in front of a real server (PostgreSQL, Redis) that a test can cut
 * and restore: a real network outage for the client, without stopping the shared server that
 * other test runs use. No mock: every byte goes to and comes from the real server.
 */
import net from 'node:net';

/** Which connections a stall freezes: those open now, those opened from now on, or both. */
export type StallScope = 'all' | 'existing' | 'new';

interface Connection {
  /** Nothing gets through this connection, either way. */
  stalled: boolean;
}

export class TcpRelay {
  readonly #sockets = new Set<net.Socket>();
  readonly #connections = new Set<Connection>();
  #server: net.Server | null = null;
  /** Connections accepted from now on are stalled from their first byte. */
  #stallNew = false;
  /** Fixed after the first `open()`, so a restored relay answers on the same address. */
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** A relay to the host and port of a `redis://` or `postgres://` URL. */
  static to(url: string, defaultPort: number): TcpRelay {
    const parsed = new URL(url);
    return new TcpRelay({ host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port || defaultPort) });
  }

  /** Listens (again) and forwards every new connection to the target. */
  async open(): Promise<void> {
    if (this.#server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect({ host: this.target.host, port: this.target.port });
      const connection: Connection = { stalled: this.#stallNew };
      this.#connections.add(connection);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {});
      }
      // One side closing closes the other: the client sees what a dead server would cause.
      client.on('close', () => {
        upstream.destroy();
        this.#connections.delete(connection);
      });
      upstream.on('close', () => client.destroy());
      // While stalled, bytes are dropped both ways: a server that stopped answering (a network
      // partition, a frozen host) rather than one that went away. A stalled new connection is
      // accepted and never answered, not even the protocol's greeting.
      client.on('data', (chunk: Buffer) => void (connection.stalled || upstream.write(chunk)));
      upstream.on('data', (chunk: Buffer) => void (connection.stalled || client.write(chunk)));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.#server = server;
  }

  /** The outage: every open connection is destroyed and new ones are refused until `open()`. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  /**
   * Connections stay open and new ones are accepted, but nothing gets through either way: on the
   * connections open now (`existing`), on those opened from now on (`new`), or on both (`all`).
   */
  stall(scope: StallScope = 'all'): void {
    if (scope !== 'new') for (const connection of this.#connections) connection.stalled = true;
    if (scope !== 'existing') this.#stallNew = true;
  }

  /** Ends a stall: the connections that lived through it are dropped, new ones work again. */
  async unstall(): Promise<void> {
    await this.cut();
    this.#stallNew = false;
    await this.open();
  }

  /** Rewrites a service URL so the client goes through this relay. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }
}
