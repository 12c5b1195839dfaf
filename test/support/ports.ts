import { createServer } from 'node:net';

/** A loopback port that was free a moment ago (for servers a test starts in another process, or starts again). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

/**
 * Waits, when needed, so that at least `ms` are left in the current clock minute: quota windows
 * shared through Redis are aligned to the minute, and a test that counts one window's grants must
 * not straddle two.
 */
export async function untilMinuteHasLeft(ms: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < ms) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
