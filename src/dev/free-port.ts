import { createServer } from 'node:net';

/** Asks the OS for a free TCP port on the loopback interface. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a probe socket'));
        return;
      }
      const { port } = address;
      server.close(() => resolvePort(port));
    });
  });
}

/** Whether `port` can be bound on `host` right now. */
function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolveFree(false));
    server.listen(port, host, () => server.close(() => resolveFree(true)));
  });
}

/**
 * A free TCP port from `min` to `max` (inclusive), tried at random: for a program that cannot use the OS's
 * ephemeral ports (Temporal's SQL schema keeps a member's port in a signed 16-bit column, so a port above
 * 32767 cannot be stored).
 */
export async function freePortInRange(min: number, max: number, host = '127.0.0.1'): Promise<number> {
  // Bounded: 200 random tries; a range this wide with that many taken ports means something is wrong.
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (await canListen(port, host)) return port;
  }
  throw new Error(`no free TCP port from ${min} to ${max} on ${host} after 200 tries`);
}
