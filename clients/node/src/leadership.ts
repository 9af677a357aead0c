// A campaign's leadership (docs/design.md#elections): a Hold session with a
// value. The daemon extends the term while the stream lives and says LOST
// the moment it can no longer guarantee it; `signal` aborts then, or when
// the last valid_for (counted from when its message arrived) runs out with
// no word from the daemon, whichever comes first: the leader's rule.

import { inspect } from 'node:util';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { LeadershipLostError, RedlockdError } from './errors';
import { CampaignEvent, type CampaignRequest, type CampaignResponse, type CampaignStart } from './gen/redlockd/v1/election';
import { openStream, Session } from './session';
import { electionValue, fromDuration } from './validate';

/** A Campaign stream. */
export type CampaignStream = ClientDuplexStream<CampaignRequest, CampaignResponse>;

/**
 * Sends `start` on a new Campaign stream and resolves once the candidate
 * leads (ELECTED). Rejects with a typed error when the daemon refuses, and
 * with the signal's reason when `signal` aborts first (the candidacy is
 * withdrawn).
 */
export function openCampaign(call: CampaignStream, start: CampaignStart, signal?: AbortSignal): Promise<Leadership> {
  const first = { request: { $case: 'start' as const, value: start } };
  return openStream<CampaignRequest, CampaignResponse, Leadership>(call, first, 'campaign', signal, (reply, receivedAt) => {
    if (reply.event === CampaignEvent.CAMPAIGN_EVENT_ELECTED) {
      const validUntil = receivedAt + fromDuration(reply.validFor);
      return new Leadership(call, start.election, start.candidate, reply.term, validUntil, reply.value);
    }
    const why = reply.reason || CampaignEvent[reply.event] || String(reply.event);
    return new RedlockdError(`the campaign for ${JSON.stringify(start.election)} ended before it was elected: ${why}`);
  });
}

interface Pending {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A leadership a Campaign stream holds. Made by Client.campaign(). */
export class Leadership extends Session<CampaignRequest, CampaignResponse> implements AsyncDisposable {
  /** The election, as named. */
  readonly election: string;
  /** This candidate's name. */
  readonly candidate: string;
  /**
   * The term: the election lock's fencing token, strictly increasing per
   * election, a bigint (exact above 2^53). Send it with every write.
   */
  readonly term: bigint;
  /** The value published now: ELECTED's, then each confirmed proclaim()'s. */
  value: Buffer;
  /**
   * Aborted, with a LeadershipLostError as its reason, the moment the
   * leadership is lost or its own deadline passes; with the caller's reason
   * when the `signal` given to campaign() aborts (which resigns).
   */
  declare readonly signal: AbortSignal;
  #proclaims: Pending[] = [];

  /** @internal */
  constructor(call: CampaignStream, election: string, candidate: string, term: bigint, validUntil: number, value: Buffer) {
    super(call, validUntil, { last: { request: { $case: 'resign', value: {} } }, what: `the resignation from ${JSON.stringify(election)}` });
    this.election = election;
    this.candidate = candidate;
    this.term = term;
    this.value = value;
    this._whenEnded(() => {
      const error = this.lost ? this.signal.reason : new RedlockdError('the leadership ended before the value was published');
      for (const pending of this.#proclaims.splice(0)) pending.reject(error);
    });
  }

  /** @internal */
  protected lostError(reason: string): LeadershipLostError {
    return new LeadershipLostError(`the leadership of ${JSON.stringify(this.election)} (term ${this.term}) was lost: ${reason}`);
  }

  /** @internal A message of the campaign after ELECTED. */
  _event(reply: CampaignResponse, receivedAt: number): void {
    switch (reply.event) {
      case CampaignEvent.CAMPAIGN_EVENT_EXTENDED:
        return this.extendTo(receivedAt + fromDuration(reply.validFor));
      case CampaignEvent.CAMPAIGN_EVENT_PROCLAIMED:
        this.value = reply.value;
        return this.#proclaims.shift()?.resolve();
      case CampaignEvent.CAMPAIGN_EVENT_LOST:
        return this.lostByDaemon(reply.reason);
      case CampaignEvent.CAMPAIGN_EVENT_RESIGNED:
        // A resignation holds the term to its end; unasked, it is a loss all the same.
        return this.endedByDaemon(true, `resigned by the daemon: ${reply.reason}`);
      default:
        return;
    }
  }

  /**
   * Publishes `value` (a string, sent as UTF-8, or bytes: at most 4096) for
   * leader() and observe() to show; resolves once the daemon confirms it
   * (PROCLAIMED). Rejects with the LeadershipLostError when the leadership
   * is lost first.
   */
  async proclaim(value: string | Uint8Array): Promise<void> {
    const bytes = electionValue(value);
    if (this.lost) throw this.signal.reason;
    if (this.ending) throw new RedlockdError(`the leadership of ${JSON.stringify(this.election)} has ended`);
    return new Promise((resolve, reject) => {
      this.#proclaims.push({ resolve, reject });
      this.send({ request: { $case: 'proclaim', value: { value: bytes } } });
    });
  }

  /**
   * Resigns and waits for the daemon's word; the next candidate may lead
   * at once. Resolves true when this candidate led until then, false when
   * the leadership was lost first (then `signal` has aborted). Calling it
   * again returns the first answer.
   */
  resign(): Promise<boolean> {
    return this.giveBack();
  }

  /** `await using`: resigns, and throws LeadershipLostError when the leadership was lost. */
  async [Symbol.asyncDispose](): Promise<void> {
    return this.dispose(() => this.lostError('it did not last until the resignation'));
  }

  toJSON(): { election: string; candidate: string; term: string; validUntil: number; lost: boolean } {
    const { election, candidate, validUntil, lost } = this;
    return { election, candidate, term: this.term.toString(), validUntil, lost };
  }

  [inspect.custom](): string {
    return `Leadership { election: ${JSON.stringify(this.election)}, candidate: ${JSON.stringify(this.candidate)}, term: ${this.term}n, lost: ${this.lost} }`;
  }
}
