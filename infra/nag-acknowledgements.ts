import { type Acknowledgment, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * The reviewed list: every cdk-nag AwsSolutions finding this stack accepts, each with its reason.
 * test/infra/nag.test.ts fails on an acknowledgement that is not here, and on an entry here that
 * no longer silences a real finding. Fix a finding rather than adding to this list.
 */
export const NAG_ACKNOWLEDGEMENTS = {
  tokenRoute: {
    id: 'AwsSolutions-APIG4',
    reason:
      'Authenticated by the function itself: lib/http/endpoint.ts verifies the access token (EdDSA signature ' +
      'by a published key of ours, alg, typ, issuer, audience, expiry) before any handler runs, and each use ' +
      'case checks the session with its first read, answering 401 in the API envelope. A gateway authorizer ' +
      'would duplicate that check, could not see a sign-out at once, and would answer in the gateway format.',
  },
  publicRoute: {
    id: 'AwsSolutions-APIG4',
    reason:
      'Public by design: sign-up, sign-in and refresh are how a caller gets a token, the JWKS document holds ' +
      'public keys only, and the default route only answers 404/405 without touching data. All are throttled ' +
      '(credential routes more strictly), and sign-in, refresh and password change are limited in the table per address, session or account.',
  },
  streamListing: {
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'dynamodb:ListStreams, which a stream mapping (the mailer\'s, the team cleanup\'s) needs, takes no resource ' +
      'narrower than *; it only lists stream ARNs. Every other action of those functions names the table, ' +
      'its stream, their dead-letter queue or the SES identity.',
  },
  deadLetterQueue: {
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is itself the dead-letter destination of a stream mapping (the mailer\'s or the team cleanup\'s): it holds records ' +
      'that failed every retry, raises an alarm, and is drained by a person; a dead-letter queue of its own ' +
      'would only move them again.',
  },
} as const satisfies Record<string, Acknowledgment>;

export type NagAcknowledgement = keyof typeof NAG_ACKNOWLEDGEMENTS;

/** Records one reviewed acknowledgement on these constructs (and so on everything under them). */
export const acknowledge = (which: NagAcknowledgement, ...scopes: IConstruct[]): void => {
  for (const scope of scopes) Validations.of(scope).acknowledge(NAG_ACKNOWLEDGEMENTS[which]);
};
