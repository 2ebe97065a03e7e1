import { App } from 'aws-cdk-lib';
import { RosterStack } from './stack.ts';

// Env-agnostic (no account or region): synth needs no credentials and makes no lookups.
const app = new App();
new RosterStack(app, 'Roster', { description: 'Roster: teams, members, roles and invitations API' });
