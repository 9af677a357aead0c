// node test/.build/conformance/main.js [--only ID] [--own-daemon-ids] [--scenarios DIR]
// (clients/node/test.sh runs it): plays the conformance scenarios
// (clients/conformance/README.md) that need no daemon of their own through
// @redlockd/client against REDLOCKD_ADDR, a line per scenario; exits 1
// when any failed. `--only ID` plays one (test.sh gives each one that kills
// masters a daemon of its own); `--own-daemon-ids` lists those.

import { parseArgs } from 'node:util';
import { Client } from '@redlockd/client';
import { Calls } from './calls';
import { load, Player, SCENARIOS } from './play';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { only: { type: 'string' }, 'own-daemon-ids': { type: 'boolean' }, scenarios: { type: 'string' } },
  });
  const scenarios = load(values.scenarios ?? SCENARIOS);
  const own = (s: { needs?: string[] }) => s.needs?.includes('own-daemon') ?? false;
  if (values['own-daemon-ids']) {
    console.log(scenarios.filter(own).map((s) => s.id).join('\n'));
    return 0;
  }
  if (values.only !== undefined && !scenarios.some((s) => s.id === values.only)) {
    console.error(`conformance: no scenario ${values.only}`);
    return 2;
  }
  const client = new Client();
  const player = new Player(new Calls(client), 'node');
  let failed = 0;
  console.log('conformance: @redlockd/client');
  for (const scenario of scenarios) {
    if (values.only === undefined ? own(scenario) : scenario.id !== values.only) continue;
    const line = await player.play(scenario);
    console.log(line);
    if (line.startsWith('FAIL')) failed += 1;
  }
  client.close();
  console.log(`conformance: ${failed} failed`);
  return failed ? 1 : 0;
}

// process.exit: a call stuck past its step's limit must not keep the suite waiting.
main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);
