package io.redlockd.client;

import io.grpc.Status;

/** The token's tenant may not lock this resource. */
public class PermissionDeniedException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public PermissionDeniedException(String message) {
    super(message, Status.Code.PERMISSION_DENIED, null);
  }

  public PermissionDeniedException(String message, Throwable cause) {
    super(message, Status.Code.PERMISSION_DENIED, cause);
  }
}
