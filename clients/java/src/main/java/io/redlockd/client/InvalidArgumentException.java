package io.redlockd.client;

import io.grpc.Status;

/**
 * A request field is out of range: the message names the field and the allowed range, in the
 * daemon's own words (checked before sending when the client can).
 */
public class InvalidArgumentException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public InvalidArgumentException(String message) {
    super(message, Status.Code.INVALID_ARGUMENT, null);
  }

  public InvalidArgumentException(String message, Throwable cause) {
    super(message, Status.Code.INVALID_ARGUMENT, cause);
  }
}
