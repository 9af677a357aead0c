"use strict";
// Where to connect and how, as redlockctl reads it: the constructor's
// options first, then REDLOCKD_ADDR, REDLOCKD_TOKEN and the PEM files named
// by REDLOCKD_CA, REDLOCKD_CERT and REDLOCKD_KEY.
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEFAULT_ADDRESS = void 0;
exports.connection = connection;
const node_fs_1 = require("node:fs");
const grpc_js_1 = require("@grpc/grpc-js");
const errors_1 = require("./errors");
/** The daemon's default listen address. */
exports.DEFAULT_ADDRESS = '127.0.0.1:7420';
function env(name) {
    const value = process.env[name];
    return value ? value : undefined;
}
function readPem(variable) {
    const file = env(variable);
    if (!file)
        return undefined;
    try {
        return (0, node_fs_1.readFileSync)(file);
    }
    catch (e) {
        throw new errors_1.InvalidArgumentError(`invalid ${variable}: cannot read ${file}: ${e.message}`);
    }
}
function tlsFromEnv() {
    const ca = readPem('REDLOCKD_CA');
    const cert = readPem('REDLOCKD_CERT');
    const key = readPem('REDLOCKD_KEY');
    if (!cert !== !key)
        throw new errors_1.InvalidArgumentError('REDLOCKD_CERT and REDLOCKD_KEY must be set together');
    return ca || cert ? { ca, cert, key } : undefined;
}
const pem = (v) => v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v);
/** The address, credentials and call metadata for `options`. */
function connection(options = {}) {
    let address = options.address ?? env('REDLOCKD_ADDR') ?? exports.DEFAULT_ADDRESS;
    let tls = options.tls ?? tlsFromEnv();
    if (address.startsWith('https://')) {
        tls = tls ?? {};
        address = address.slice('https://'.length);
    }
    else if (address.startsWith('http://')) {
        address = address.slice('http://'.length);
    }
    if (tls && !tls.cert !== !tls.key)
        throw new errors_1.InvalidArgumentError('invalid tls: cert and key must be given together');
    const token = options.token ?? env('REDLOCKD_TOKEN');
    const metadata = new grpc_js_1.Metadata();
    if (token)
        metadata.set('authorization', `Bearer ${token}`);
    return {
        address,
        credentials: tls ? grpc_js_1.credentials.createSsl(pem(tls.ca), pem(tls.key), pem(tls.cert)) : grpc_js_1.credentials.createInsecure(),
        metadata,
    };
}
