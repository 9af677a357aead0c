package io.redlockd.client;

import io.grpc.Status;

/** A waiter or session limit of the daemon was hit, or a tenant's quota. */
public class ResourceExhaustedException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public ResourceExhaustedException(String message) {
    super(message, Status.Code.RESOURCE_EXHAUSTED, null);
  }

  public ResourceExhaustedException(String message, Throwable cause) {
    super(message, Status.Code.RESOURCE_EXHAUSTED, cause);
  }
}
