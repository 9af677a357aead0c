package io.redlockd.client;

/**
 * {@code campaign} gave up: its wait ran out while other candidates led, or the daemon ended the
 * candidacy before it was elected (NOT_ELECTED: it shuts down, say).
 */
public class NotElectedException extends RedlockdException {
  private static final long serialVersionUID = 1L;

  public NotElectedException(String message) {
    super(message);
  }
}
