/**
 * `npm run preflight -- [-c key=value ...] [--region <region>] [--profile <profile>]`: checks an AWS
 * account and region before `cdk deploy` (scripts/preflight/main.ts), one line per finding, exit
 * code 1 when any fails. Pass the same `-c` options the deploy will get.
 */
import { defaultDeps, main } from './preflight/main.ts';

process.exitCode = await main(process.argv.slice(2), defaultDeps());
