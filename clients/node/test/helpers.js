'use strict';
// The tests run against a real daemon and five real masters, started by
// scripts/with-dev-daemon (test.sh does it).
const crypto = require('node:crypto');

if (!process.env.REDLOCKD_ADDR) {
  throw new Error('REDLOCKD_ADDR is not set: run the tests through clients/node/test.sh');
}

// Under "examples/": the prefix the secure daemon's tenant may lock.
const resource = () => `examples/node-${crypto.randomBytes(6).toString('hex')}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const masterPorts = () => process.env.REDLOCKD_DEV_MASTER_PORTS.split(' ').map(Number);
const masterPids = () => process.env.REDLOCKD_DEV_MASTER_PIDS.split(' ').map(Number);

module.exports = { resource, sleep, masterPorts, masterPids };
