//! The integration tests: one binary, so `support` is compiled once. Each
//! module starts what it needs for real — `redis-server` masters on free
//! loopback ports, daemons served in-process on port 0 or as the real
//! binary, fault proxies — and stops it on drop.

mod support;

mod admin;
mod audit;
mod binary;
mod checker;
mod checker_kinds;
mod client;
mod client_elections;
mod cluster_batches;
mod cluster_faults;
mod cluster_identity;
mod cluster_network;
mod cluster_positions;
mod cluster_shards;
mod controls;
mod election_faults;
mod elections;
mod faults;
mod faults_kinds;
mod floods;
mod grpc_redis;
mod handoffs;
mod http_audit;
mod http_elections;
mod http_errors;
mod http_openapi;
mod http_sessions;
mod http_streams;
mod http_tls;
mod http_unary;
mod identity;
mod key_layout;
mod listing;
mod lock_costs;
mod lock_delay;
mod lua_scripts;
mod node_details;
mod operations;
mod permits;
mod persistence;
mod pipeline;
mod proxy;
mod quarantine;
mod quotas;
mod redis_acl;
mod redlockctl;
mod redlockctl_elect;
mod redlockctl_run;
mod reentrancy;
mod release_channels;
mod release_delivery;
mod schedules;
mod script_batches;
mod sessions;
mod sets;
mod shared;
mod soak;
mod tenants;
mod tls;
mod traces;
mod waiters;
mod watch;
