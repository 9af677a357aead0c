package io.redlockd.client;

import io.grpc.Status;

/** The call's deadline passed before the daemon answered. */
public class DeadlineExceededException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public DeadlineExceededException(String message) {
    super(message, Status.Code.DEADLINE_EXCEEDED, null);
  }

  public DeadlineExceededException(String message, Throwable cause) {
    super(message, Status.Code.DEADLINE_EXCEEDED, cause);
  }
}
