package io.redlockd.spring.integration;

import java.util.function.Supplier;

/**
 * Runs a call to the daemon with the thread's interrupt flag cleared, then sets it again: gRPC
 * cancels a blocking call made on an interrupted thread at once, and a release or a renewal must not
 * be dropped because the holder's thread was interrupted (RedisLockRegistry's unlock, too, completes
 * on an interrupted thread).
 */
final class Uninterrupted {
  private Uninterrupted() {}

  static <T> T call(Supplier<T> call) {
    boolean interrupted = Thread.interrupted();
    try {
      return call.get();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
