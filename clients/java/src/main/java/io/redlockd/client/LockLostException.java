package io.redlockd.client;

/**
 * The lock was lost while it was held, or was no longer held when it was released: the work under
 * it was not protected to the end. Closing a {@link HeldLock} or a {@link Lease} throws it, also
 * when the work itself succeeded: a failed release is reported, never swallowed.
 */
public class LockLostException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public LockLostException(String message) {
    super(message);
  }
}
