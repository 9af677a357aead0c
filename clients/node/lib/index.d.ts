import './polyfill';
export { Client, type AcquireManyOptions, type AcquireOptions, type HoldOptions } from './client';
export { DEFAULT_ADDRESS, type ClientOptions, type TlsOptions } from './connection';
export { DeadlineExceededError, FailedPreconditionError, InvalidArgumentError, LockLostError, NotAcquiredError, PermissionDeniedError, RedlockdError, ResourceExhaustedError, UnauthenticatedError, UnavailableError, } from './errors';
export type { InspectResponse, NodeView } from './gen/redlockd/v1/lock';
export { HeldLock } from './held-lock';
export { Lease } from './lease';
export { MAX_OWNER_BYTES, MAX_REENTRANCY_KEY_BYTES, MAX_RESOURCE_BYTES, MAX_SET } from './validate';
