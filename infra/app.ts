import { App } from 'aws-cdk-lib';
import { rosterStacks } from './stack.ts';

// Env-agnostic (no account or region): synth needs no credentials and makes no lookups.
rosterStacks(new App());
