// Where to connect and how, as redlockctl reads it: the constructor's
// options first, then REDLOCKD_ADDR, REDLOCKD_TOKEN and the PEM files named
// by REDLOCKD_CA, REDLOCKD_CERT and REDLOCKD_KEY.

import { readFileSync } from 'node:fs';
import { ChannelCredentials, credentials, Metadata } from '@grpc/grpc-js';
import { InvalidArgumentError } from './errors';

/** The daemon's default listen address. */
export const DEFAULT_ADDRESS = '127.0.0.1:7420';

/** TLS material, PEM (a Buffer or a string). */
export interface TlsOptions {
  /** The CA to trust; unset: the system's roots. */
  ca?: Buffer | string;
  /** The client certificate chain, for mutual TLS (with `key`). */
  cert?: Buffer | string;
  /** The client certificate's private key (with `cert`). */
  key?: Buffer | string;
}

/** How to reach the daemon; each unset option comes from the environment. */
export interface ClientOptions {
  /** host:port, or http://host:port, or https://host:port (TLS with the system's roots). Default REDLOCKD_ADDR, then 127.0.0.1:7420. */
  address?: string;
  /** The bearer token of a tenant. Default REDLOCKD_TOKEN. */
  token?: string;
  /** TLS. Default: from REDLOCKD_CA, REDLOCKD_CERT and REDLOCKD_KEY when any is set; else plaintext. */
  tls?: TlsOptions;
}

/** What a Client connects with. */
export interface Connection {
  address: string;
  credentials: ChannelCredentials;
  metadata: Metadata;
}

function env(name: string): string | undefined {
  const value = process.env[name];
  return value ? value : undefined;
}

function readPem(variable: string): Buffer | undefined {
  const file = env(variable);
  if (!file) return undefined;
  try {
    return readFileSync(file);
  } catch (e) {
    throw new InvalidArgumentError(`invalid ${variable}: cannot read ${file}: ${(e as Error).message}`);
  }
}

function tlsFromEnv(): TlsOptions | undefined {
  const ca = readPem('REDLOCKD_CA');
  const cert = readPem('REDLOCKD_CERT');
  const key = readPem('REDLOCKD_KEY');
  if (!cert !== !key) throw new InvalidArgumentError('REDLOCKD_CERT and REDLOCKD_KEY must be set together');
  return ca || cert ? { ca, cert, key } : undefined;
}

const pem = (v: Buffer | string | undefined): Buffer | null =>
  v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v);

/** The address, credentials and call metadata for `options`. */
export function connection(options: ClientOptions = {}): Connection {
  let address = options.address ?? env('REDLOCKD_ADDR') ?? DEFAULT_ADDRESS;
  let tls = options.tls ?? tlsFromEnv();
  if (address.startsWith('https://')) {
    tls = tls ?? {};
    address = address.slice('https://'.length);
  } else if (address.startsWith('http://')) {
    address = address.slice('http://'.length);
  }
  if (tls && !tls.cert !== !tls.key) throw new InvalidArgumentError('invalid tls: cert and key must be given together');
  const token = options.token ?? env('REDLOCKD_TOKEN');
  const metadata = new Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return {
    address,
    credentials: tls ? credentials.createSsl(pem(tls.ca), pem(tls.key), pem(tls.cert)) : credentials.createInsecure(),
    metadata,
  };
}
