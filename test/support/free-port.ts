import { createServer } from 'node:net';

/** Asks the kernel for a free loopback port (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a probe socket'));
        return;
      }
      const port = address.port;
      server.close(() => resolvePort(port));
    });
  });
}

/** `count` different free loopback ports. */
export async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  // Bounded: each probe returns a fresh ephemeral port; collisions are rare.
  for (let attempt = 0; ports.size < count && attempt < count * 20; attempt += 1) {
    ports.add(await freePort());
  }
  if (ports.size < count) throw new Error(`could not find ${count} free loopback ports`);
  return [...ports];
}
