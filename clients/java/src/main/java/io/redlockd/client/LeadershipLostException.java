package io.redlockd.client;

/**
 * A leadership was lost (LOST, a resignation it did not ask for, the stream broke, or its own
 * deadline passed with no word from the daemon), or did not last until it was resigned: what was
 * done as leader may have overlapped the next leader's work. Closing a {@link Leadership} throws
 * it, also when the work itself succeeded. A {@link LockLostException}: the election's lock was
 * lost.
 */
public class LeadershipLostException extends LockLostException {
  private static final long serialVersionUID = 1L;

  public LeadershipLostException(String message) {
    super(message);
  }
}
