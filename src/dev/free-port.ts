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
