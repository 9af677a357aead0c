package io.redlockd.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.Map;
import java.util.TreeMap;

/** The typed exception of a failed call, by gRPC status code. */
final class Errors {
  private Errors() {}

  static RedlockdException from(Throwable t) {
    if (t instanceof RedlockdException) {
      return (RedlockdException) t;
    }
    Status status = Status.fromThrowable(t);
    String message = status.getDescription();
    if (message == null || message.isEmpty()) {
      message = status.getCode().toString();
    }
    if (status.getCause() != null && status.getCause().getMessage() != null) {
      // gRPC's own failures ("io exception") say what happened in their cause.
      message += " (" + status.getCause().getMessage() + ")";
    }
    switch (status.getCode()) {
      case UNAVAILABLE:
        return unavailable(message, t);
      case INVALID_ARGUMENT:
        return new InvalidArgumentException(message, t);
      case UNAUTHENTICATED:
        return new UnauthenticatedException(message, t);
      case PERMISSION_DENIED:
        return new PermissionDeniedException(message, t);
      case RESOURCE_EXHAUSTED:
        return new ResourceExhaustedException(message, t);
      case FAILED_PRECONDITION:
        return new FailedPreconditionException(message, t);
      case DEADLINE_EXCEEDED:
        return new DeadlineExceededException(message, t);
      default:
        return new RedlockdException(status.getCode() + ": " + message, status.getCode(), t);
    }
  }

  /**
   * UNAVAILABLE with the status's ErrorInfo (reason NO_QUORUM): "node.<i>" is what master i said,
   * "needed" how many make a quorum (src/api/status.rs).
   */
  private static UnavailableException unavailable(String message, Throwable t) {
    Map<Integer, String> nodes = new TreeMap<>();
    Integer needed = null;
    com.google.rpc.Status details = t instanceof StatusRuntimeException ? StatusProto.fromThrowable(t) : null;
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        if (!any.is(ErrorInfo.class)) {
          continue;
        }
        ErrorInfo info;
        try {
          info = any.unpack(ErrorInfo.class);
        } catch (InvalidProtocolBufferException e) {
          continue;
        }
        for (Map.Entry<String, String> e : info.getMetadataMap().entrySet()) {
          String key = e.getKey();
          if (key.startsWith("node.") && digits(key.substring(5))) {
            nodes.put(Integer.parseInt(key.substring(5)), e.getValue());
          } else if (key.equals("needed") && digits(e.getValue())) {
            needed = Integer.parseInt(e.getValue());
          }
        }
      }
    }
    return new UnavailableException(message, nodes, needed, t);
  }

  private static boolean digits(String s) {
    return !s.isEmpty() && s.length() < 10 && s.chars().allMatch(c -> c >= '0' && c <= '9');
  }
}
