// The streams a Client has open — Hold sessions, campaigns, observe and
// watch — so that Client.close() ends every one of them: a held lock or a
// leadership is lost (its `signal` aborts, the daemon lets go as the
// stream goes), a pending hold() or campaign() rejects, and an observe()
// or watch() iterator ends.

import { RedlockdError } from './errors';

/** What close() needs of a session (session.ts's Session). */
interface Closable {
  _close(reason: string): void;
  _whenEnded(callback: () => void): void;
}

/** What close() says to the sessions it ends. */
const CLOSED = 'the client was closed';

/** The open streams of one Client. */
export class OpenStreams {
  readonly #closing = new AbortController();
  readonly #sessions = new Set<Closable>();

  /** Aborted by close(): follow() ends its iteration when it aborts. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /**
   * `opening` (a session opening on `call`), tracked: close() cancels the
   * call while it opens, and ends the session once open. Rejects at once
   * after close().
   */
  async session<S extends Closable>(call: { cancel(): void }, opening: Promise<S>): Promise<S> {
    const cancel = () => call.cancel();
    if (this.closing.aborted) {
      call.cancel();
      opening.catch(() => {});
      throw new RedlockdError(CLOSED);
    }
    this.closing.addEventListener('abort', cancel, { once: true });
    try {
      const session = await opening;
      if (this.closing.aborted) session._close(CLOSED); // opened as close() ran
      this.#sessions.add(session);
      session._whenEnded(() => this.#sessions.delete(session));
      return session;
    } finally {
      this.closing.removeEventListener('abort', cancel);
    }
  }

  /** Ends every open session, then every other stream (calls still opening, observe, watch). */
  close(): void {
    for (const session of [...this.#sessions]) session._close(CLOSED);
    this.#closing.abort(new RedlockdError(CLOSED));
  }
}
