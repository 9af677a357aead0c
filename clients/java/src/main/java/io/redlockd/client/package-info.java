/**
 * The Java client of redlockd: distributed locks with fencing tokens, from a daemon that runs
 * Redlock against independent Redis masters.
 *
 * <p>{@link io.redlockd.client.RedlockdClient#hold} opens a Hold session the daemon keeps
 * extending ({@link io.redlockd.client.HeldLock}, released by try-with-resources; {@code lost()}
 * completes the moment the lock is lost); {@link io.redlockd.client.RedlockdClient#tryAcquire}
 * takes a {@link io.redlockd.client.Lease} the caller keeps alive, or returns empty when someone
 * else kept the lock (contention is a value). {@link io.redlockd.client.RedlockdClient#campaign}
 * elects a leader ({@link io.redlockd.client.Leadership}, resigned by try-with-resources; {@code
 * lost()} completes at LOST or at the client's own deadline); {@code observe} and {@code watch}
 * follow an election or a lock ({@link io.redlockd.client.Follower}). Fencing tokens and terms are {@link
 * io.redlockd.client.FencingToken}s, compared as the unsigned 64-bit integers they are.
 * Durations are {@link java.time.Duration}s; validity deadlines are on {@link System#nanoTime()}'s
 * clock, counted from the moment the request was sent.
 */
package io.redlockd.client;
