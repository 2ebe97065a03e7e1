import { App } from 'aws-cdk-lib';
import { rosterStacks, stageName } from './stack.ts';

// Env-agnostic (no account or region): synth needs no credentials and makes no lookups.
const app = new App();
rosterStacks(app, {}, stageName(app.node.tryGetContext('stage')));
