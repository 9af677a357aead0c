// @redlockd/client: distributed locks with fencing tokens, from redlockd.
//
//   const client = new Client();                       // REDLOCKD_ADDR, REDLOCKD_TOKEN, TLS files
//   await using lock = await client.hold('orders/42', { ttl: 10_000, wait: 5_000 });
//   await store.write(row, { fencingToken: lock.fencingToken, signal: lock.signal });
//   await using leadership = await client.campaign('jobs', { candidate: 'pod-a' });
//   await store.write(row, { term: leadership.term, signal: leadership.signal });

import './polyfill';

export {
  Client,
  type AcquireManyOptions,
  type AcquireOptions,
  type CampaignOptions,
  type FollowOptions,
  type HoldOptions,
} from './client';
export { DEFAULT_ADDRESS, type ClientOptions, type TlsOptions } from './connection';
export {
  DeadlineExceededError,
  FailedPreconditionError,
  InvalidArgumentError,
  LeadershipLostError,
  LockLostError,
  NotAcquiredError,
  PermissionDeniedError,
  RedlockdError,
  ResourceExhaustedError,
  UnauthenticatedError,
  UnavailableError,
} from './errors';
export type { LeaderState, WatchChange, WatchEventName } from './follow';
export type { Holder, InspectResponse, NodeView } from './gen/redlockd/v1/lock';
export { HeldLock } from './held-lock';
export { Leadership } from './leadership';
export { Lease } from './lease';
export { MAX_ELECTION_VALUE_BYTES, MAX_OWNER_BYTES, MAX_REENTRANCY_KEY_BYTES, MAX_RESOURCE_BYTES, MAX_SET } from './validate';
