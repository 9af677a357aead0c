package io.redlockd.client;

import io.grpc.Status;

/**
 * The lock is held as another kind than asked: permits of a semaphore with another number of
 * permits are out, or a reentrancy key holds the lock in another mode or number of permits.
 */
public class FailedPreconditionException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public FailedPreconditionException(String message) {
    super(message, Status.Code.FAILED_PRECONDITION, null);
  }

  public FailedPreconditionException(String message, Throwable cause) {
    super(message, Status.Code.FAILED_PRECONDITION, cause);
  }
}
