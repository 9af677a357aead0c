package io.redlockd.client;

import io.grpc.Status;

/** No valid bearer token (REDLOCKD_TOKEN). */
public class UnauthenticatedException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public UnauthenticatedException(String message) {
    super(message, Status.Code.UNAUTHENTICATED, null);
  }

  public UnauthenticatedException(String message, Throwable cause) {
    super(message, Status.Code.UNAUTHENTICATED, cause);
  }
}
