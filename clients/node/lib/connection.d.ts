import { ChannelCredentials, Metadata } from '@grpc/grpc-js';
/** The daemon's default listen address. */
export declare const DEFAULT_ADDRESS = "127.0.0.1:7420";
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
/** The address, credentials and call metadata for `options`. */
export declare function connection(options?: ClientOptions): Connection;
