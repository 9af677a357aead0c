'use strict';
// What a call can fail with, by gRPC status code. Contention is not an
// error: acquire() resolves to null.

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protobuf = require('protobufjs');

class RedlockdError extends Error {
  constructor(message, code) {
    super(message);
    this.name = this.constructor.name;
    /** The gRPC status code, when the daemon answered with one. */
    this.code = code;
  }
}
/** A request field is out of range: the message names it and the range. */
class InvalidArgumentError extends RedlockdError {}
/** Fewer than a quorum of the Redis masters could take part. */
class UnavailableError extends RedlockdError {
  constructor(message, nodes, needed) {
    super(message, grpc.status.UNAVAILABLE);
    /** What each master said ("granted", "timed out", ...), by index. */
    this.nodes = nodes;
    /** The quorum, when the daemon said it. */
    this.needed = needed;
  }
}
/** hold(): the wait ran out while someone else held the lock. */
class NotAcquiredError extends RedlockdError {}
/** The lock was lost while it was held. */
class LockLostError extends RedlockdError {}
class UnauthenticatedError extends RedlockdError {}
class PermissionDeniedError extends RedlockdError {}
class ResourceExhaustedError extends RedlockdError {}
class DeadlineExceededError extends RedlockdError {}

const BY_CODE = {
  [grpc.status.INVALID_ARGUMENT]: InvalidArgumentError,
  [grpc.status.UNAUTHENTICATED]: UnauthenticatedError,
  [grpc.status.PERMISSION_DENIED]: PermissionDeniedError,
  [grpc.status.RESOURCE_EXHAUSTED]: ResourceExhaustedError,
  [grpc.status.DEADLINE_EXCEEDED]: DeadlineExceededError,
};

let rpcTypes;
function rpc() {
  if (!rpcTypes) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) =>
      target.startsWith('google/protobuf/')
        ? target
        : path.join(__dirname, '..', 'proto', target);
    root.loadSync('google/rpc/status.proto', { keepCase: true });
    rpcTypes = { Status: root.lookupType('google.rpc.Status'), ErrorInfo: root.lookupType('google.rpc.ErrorInfo') };
  }
  return rpcTypes;
}

/** What each master said, from the status's google.rpc.ErrorInfo. */
function errorInfo(metadata) {
  const nodes = {};
  let needed;
  const raw = metadata && metadata.get('grpc-status-details-bin');
  if (!raw || raw.length === 0) return { nodes, needed };
  const { Status, ErrorInfo } = rpc();
  const status = Status.decode(Buffer.isBuffer(raw[0]) ? raw[0] : Buffer.from(raw[0]));
  for (const detail of status.details || []) {
    if (!String(detail.type_url).endsWith('google.rpc.ErrorInfo')) continue;
    const info = ErrorInfo.decode(detail.value);
    for (const [key, value] of Object.entries(info.metadata || {})) {
      if (key.startsWith('node.')) nodes[Number(key.slice(5))] = value;
      else if (key === 'needed') needed = Number(value);
    }
  }
  return { nodes, needed };
}

/** The typed error of a failed call. */
function fromStatus(err) {
  if (err instanceof RedlockdError) return err;
  const code = err.code;
  const message = err.details || err.message;
  if (code === grpc.status.UNAVAILABLE) {
    const { nodes, needed } = errorInfo(err.metadata);
    return new UnavailableError(message, nodes, needed);
  }
  const Kind = BY_CODE[code];
  return Kind ? new Kind(message, code) : new RedlockdError(message, code);
}

module.exports = {
  RedlockdError,
  InvalidArgumentError,
  UnavailableError,
  NotAcquiredError,
  LockLostError,
  UnauthenticatedError,
  PermissionDeniedError,
  ResourceExhaustedError,
  DeadlineExceededError,
  fromStatus,
};
