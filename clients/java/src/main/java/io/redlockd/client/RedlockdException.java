package io.redlockd.client;

import io.grpc.Status;

/**
 * Any error of this client. Subclasses name what went wrong; {@link #code()} is the gRPC status
 * code when the daemon (or gRPC) answered with one. Contention is not an error: {@code tryAcquire}
 * returns an empty {@code Optional}.
 */
public class RedlockdException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Status.Code code;

  public RedlockdException(String message) {
    this(message, null, null);
  }

  public RedlockdException(String message, Status.Code code, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /** The gRPC status code, or {@code null} when no status was involved. */
  public Status.Code code() {
    return code;
  }
}
