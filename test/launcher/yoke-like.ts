import { commandNetworkAllow } from '../../src/config/setting-parsers.js';
import { CommandLauncher, runContainmentOf } from '../../src/launcher/command.js';
import type { LaunchSpec } from '../../src/launcher/launcher.js';

// A process that starts one run as yoke does: its own environment holds the
// app key, the webhook secret and the operator tokens (as an operator's
// `docker run --env-file` puts them), its store and key are files beside it,
// and the run is contained as yoke's command launcher contains it, or not
// (YOKE_TEST_UNCONTAINED=1, to show the same probe can see it all).

const env = process.env;
const spec = JSON.parse(env.YOKE_TEST_SPEC!) as LaunchSpec;
const launcher = new CommandLauncher({
  command: env.YOKE_TEST_PROBE!,
  logDir: `${env.YOKE_DB_PATH}.runs`,
  contain:
    env.YOKE_TEST_UNCONTAINED === '1'
      ? null
      : runContainmentOf(
          {
            dbPath: env.YOKE_DB_PATH!,
            commandWritable: [env.YOKE_TEST_OUT!],
            commandNetwork: commandNetworkAllow.parse(env.YOKE_COMMAND_NETWORK_ALLOW ?? ''),
          },
          env,
        ),
  onExit: (_id, _kind, exit) => {
    console.log(JSON.stringify(exit));
    process.exit(0);
  },
  parentEnv: env,
  extraEnv: { YOKE_TEST_OUT: env.YOKE_TEST_OUT! },
});
await launcher.start(spec);
