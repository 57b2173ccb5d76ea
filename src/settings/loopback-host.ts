/** Whether a host (a listen address, or the host of a server's address) reaches this machine only: localhost, 127.x.x.x or ::1, bracketed or not. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
