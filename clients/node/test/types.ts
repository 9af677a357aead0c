// Compiled with `tsc --noEmit` by test.sh: the published types take the
// documented shapes, `await using` included.
import { Client, HeldLock, Lease, LockLostError, UnavailableError } from '..';

async function shapes(client: Client): Promise<bigint> {
  const lease: Lease | null = await client.acquire('r', { ttl: 10_000, wait: 0 });
  if (lease) await lease.release();
  await using lock = await client.hold('r', { ttl: 10_000, wait: 5_000, signal: AbortSignal.timeout(1000) });
  const token: bigint = lock.fencingToken;
  const until: number = lock.validUntil;
  lock.signal.addEventListener('abort', () => {
    const reason = lock.signal.reason as LockLostError;
    void reason.message;
  });
  await client.using('r', { ttl: 10_000 }, async (signal: AbortSignal, held: HeldLock) => {
    void signal.aborted;
    void held.fencingToken;
  });
  try {
    await client.acquire('r');
  } catch (e) {
    if (e instanceof UnavailableError) void e.nodes[0];
  }
  return token + BigInt(Math.round(until));
}
void shapes;
