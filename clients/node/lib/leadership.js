"use strict";
// A campaign's leadership (docs/design.md#elections): a Hold session with a
// value. The daemon extends the term while the stream lives and says LOST
// the moment it can no longer guarantee it; `signal` aborts then, or when
// the last valid_for (counted from when its message arrived) runs out with
// no word from the daemon, whichever comes first: the leader's rule.
Object.defineProperty(exports, "__esModule", { value: true });
exports.Leadership = void 0;
exports.openCampaign = openCampaign;
const node_util_1 = require("node:util");
const errors_1 = require("./errors");
const election_1 = require("./gen/redlockd/v1/election");
const session_1 = require("./session");
const validate_1 = require("./validate");
/**
 * Sends `start` on a new Campaign stream and resolves once the candidate
 * leads (ELECTED). Rejects with a typed error when the daemon refuses, and
 * with the signal's reason when `signal` aborts first (the candidacy is
 * withdrawn).
 */
function openCampaign(call, start, signal) {
    const first = { request: { $case: 'start', value: start } };
    return (0, session_1.openStream)(call, first, 'campaign', signal, (reply, receivedAt) => {
        if (reply.event === election_1.CampaignEvent.CAMPAIGN_EVENT_ELECTED) {
            const validUntil = receivedAt + (0, validate_1.fromDuration)(reply.validFor);
            return new Leadership(call, start.election, start.candidate, reply.term, validUntil, reply.value);
        }
        const why = reply.reason || election_1.CampaignEvent[reply.event] || String(reply.event);
        return new errors_1.RedlockdError(`the campaign for ${JSON.stringify(start.election)} ended before it was elected: ${why}`);
    });
}
/** A leadership a Campaign stream holds. Made by Client.campaign(). */
class Leadership extends session_1.Session {
    /** The election, as named. */
    election;
    /** This candidate's name. */
    candidate;
    /**
     * The term: the election lock's fencing token, strictly increasing per
     * election, a bigint (exact above 2^53). Send it with every write.
     */
    term;
    /** The value published now: ELECTED's, then each confirmed proclaim()'s. */
    value;
    #proclaims = [];
    /** @internal */
    constructor(call, election, candidate, term, validUntil, value) {
        super(call, validUntil, { last: { request: { $case: 'resign', value: {} } }, what: `the resignation from ${JSON.stringify(election)}` });
        this.election = election;
        this.candidate = candidate;
        this.term = term;
        this.value = value;
        this._whenEnded(() => {
            const error = this.lost ? this.signal.reason : new errors_1.RedlockdError('the leadership ended before the value was published');
            for (const pending of this.#proclaims.splice(0))
                pending.reject(error);
        });
    }
    /** @internal */
    lostError(reason) {
        return new errors_1.LeadershipLostError(`the leadership of ${JSON.stringify(this.election)} (term ${this.term}) was lost: ${reason}`);
    }
    /** @internal A message of the campaign after ELECTED. */
    _event(reply, receivedAt) {
        switch (reply.event) {
            case election_1.CampaignEvent.CAMPAIGN_EVENT_EXTENDED:
                return this.extendTo(receivedAt + (0, validate_1.fromDuration)(reply.validFor));
            case election_1.CampaignEvent.CAMPAIGN_EVENT_PROCLAIMED:
                this.value = reply.value;
                return this.#proclaims.shift()?.resolve();
            case election_1.CampaignEvent.CAMPAIGN_EVENT_LOST:
                return this.lostByDaemon(reply.reason);
            case election_1.CampaignEvent.CAMPAIGN_EVENT_RESIGNED:
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
    async proclaim(value) {
        const bytes = (0, validate_1.electionValue)(value);
        if (this.lost)
            throw this.signal.reason;
        if (this.ending)
            throw new errors_1.RedlockdError(`the leadership of ${JSON.stringify(this.election)} has ended`);
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
    resign() {
        return this.giveBack();
    }
    /** `await using`: resigns, and throws LeadershipLostError when the leadership was lost. */
    async [Symbol.asyncDispose]() {
        return this.dispose(() => this.lostError('it did not last until the resignation'));
    }
    toJSON() {
        const { election, candidate, validUntil, lost } = this;
        return { election, candidate, term: this.term.toString(), validUntil, lost };
    }
    [node_util_1.inspect.custom]() {
        return `Leadership { election: ${JSON.stringify(this.election)}, candidate: ${JSON.stringify(this.candidate)}, term: ${this.term}n, lost: ${this.lost} }`;
    }
}
exports.Leadership = Leadership;
