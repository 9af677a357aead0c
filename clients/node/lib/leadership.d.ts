import { inspect } from 'node:util';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { type CampaignRequest, type CampaignResponse, type CampaignStart } from './gen/redlockd/v1/election';
import { Session } from './session';
/** A Campaign stream. */
export type CampaignStream = ClientDuplexStream<CampaignRequest, CampaignResponse>;
/**
 * Sends `start` on a new Campaign stream and resolves once the candidate
 * leads (ELECTED). Rejects with a typed error when the daemon refuses, and
 * with the signal's reason when `signal` aborts first (the candidacy is
 * withdrawn).
 */
export declare function openCampaign(call: CampaignStream, start: CampaignStart, signal?: AbortSignal): Promise<Leadership>;
/** A leadership a Campaign stream holds. Made by Client.campaign(). */
export declare class Leadership extends Session<CampaignRequest, CampaignResponse> implements AsyncDisposable {
    #private;
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
    readonly signal: AbortSignal;
    /**
     * Publishes `value` (a string, sent as UTF-8, or bytes: at most 4096) for
     * leader() and observe() to show; resolves once the daemon confirms it
     * (PROCLAIMED). Rejects with the LeadershipLostError when the leadership
     * is lost first.
     */
    proclaim(value: string | Uint8Array): Promise<void>;
    /**
     * Resigns and waits for the daemon's word; the next candidate may lead
     * at once. Resolves true when this candidate led until then, false when
     * the leadership was lost first (then `signal` has aborted). Calling it
     * again returns the first answer.
     */
    resign(): Promise<boolean>;
    /** `await using`: resigns, and throws LeadershipLostError when the leadership was lost. */
    [Symbol.asyncDispose](): Promise<void>;
    toJSON(): {
        election: string;
        candidate: string;
        term: string;
        validUntil: number;
        lost: boolean;
    };
    [inspect.custom](): string;
}
