"use strict";
// @redlockd/client: distributed locks with fencing tokens, from redlockd.
//
//   const client = new Client();                       // REDLOCKD_ADDR, REDLOCKD_TOKEN, TLS files
//   await using lock = await client.hold('orders/42', { ttl: 10_000, wait: 5_000 });
//   await store.write(row, { fencingToken: lock.fencingToken, signal: lock.signal });
//   await using leadership = await client.campaign('jobs', { candidate: 'pod-a' });
//   await store.write(row, { term: leadership.term, signal: leadership.signal });
Object.defineProperty(exports, "__esModule", { value: true });
exports.MAX_SET = exports.MAX_RESOURCE_BYTES = exports.MAX_REENTRANCY_KEY_BYTES = exports.MAX_OWNER_BYTES = exports.MAX_ELECTION_VALUE_BYTES = exports.Lease = exports.Leadership = exports.HeldLock = exports.UnavailableError = exports.UnauthenticatedError = exports.ResourceExhaustedError = exports.RedlockdError = exports.PermissionDeniedError = exports.NotAcquiredError = exports.LockLostError = exports.LeadershipLostError = exports.InvalidArgumentError = exports.FailedPreconditionError = exports.DeadlineExceededError = exports.DEFAULT_ADDRESS = exports.Client = void 0;
require("./polyfill");
var client_1 = require("./client");
Object.defineProperty(exports, "Client", { enumerable: true, get: function () { return client_1.Client; } });
var connection_1 = require("./connection");
Object.defineProperty(exports, "DEFAULT_ADDRESS", { enumerable: true, get: function () { return connection_1.DEFAULT_ADDRESS; } });
var errors_1 = require("./errors");
Object.defineProperty(exports, "DeadlineExceededError", { enumerable: true, get: function () { return errors_1.DeadlineExceededError; } });
Object.defineProperty(exports, "FailedPreconditionError", { enumerable: true, get: function () { return errors_1.FailedPreconditionError; } });
Object.defineProperty(exports, "InvalidArgumentError", { enumerable: true, get: function () { return errors_1.InvalidArgumentError; } });
Object.defineProperty(exports, "LeadershipLostError", { enumerable: true, get: function () { return errors_1.LeadershipLostError; } });
Object.defineProperty(exports, "LockLostError", { enumerable: true, get: function () { return errors_1.LockLostError; } });
Object.defineProperty(exports, "NotAcquiredError", { enumerable: true, get: function () { return errors_1.NotAcquiredError; } });
Object.defineProperty(exports, "PermissionDeniedError", { enumerable: true, get: function () { return errors_1.PermissionDeniedError; } });
Object.defineProperty(exports, "RedlockdError", { enumerable: true, get: function () { return errors_1.RedlockdError; } });
Object.defineProperty(exports, "ResourceExhaustedError", { enumerable: true, get: function () { return errors_1.ResourceExhaustedError; } });
Object.defineProperty(exports, "UnauthenticatedError", { enumerable: true, get: function () { return errors_1.UnauthenticatedError; } });
Object.defineProperty(exports, "UnavailableError", { enumerable: true, get: function () { return errors_1.UnavailableError; } });
var held_lock_1 = require("./held-lock");
Object.defineProperty(exports, "HeldLock", { enumerable: true, get: function () { return held_lock_1.HeldLock; } });
var leadership_1 = require("./leadership");
Object.defineProperty(exports, "Leadership", { enumerable: true, get: function () { return leadership_1.Leadership; } });
var lease_1 = require("./lease");
Object.defineProperty(exports, "Lease", { enumerable: true, get: function () { return lease_1.Lease; } });
var validate_1 = require("./validate");
Object.defineProperty(exports, "MAX_ELECTION_VALUE_BYTES", { enumerable: true, get: function () { return validate_1.MAX_ELECTION_VALUE_BYTES; } });
Object.defineProperty(exports, "MAX_OWNER_BYTES", { enumerable: true, get: function () { return validate_1.MAX_OWNER_BYTES; } });
Object.defineProperty(exports, "MAX_REENTRANCY_KEY_BYTES", { enumerable: true, get: function () { return validate_1.MAX_REENTRANCY_KEY_BYTES; } });
Object.defineProperty(exports, "MAX_RESOURCE_BYTES", { enumerable: true, get: function () { return validate_1.MAX_RESOURCE_BYTES; } });
Object.defineProperty(exports, "MAX_SET", { enumerable: true, get: function () { return validate_1.MAX_SET; } });
