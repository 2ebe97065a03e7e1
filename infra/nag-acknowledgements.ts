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
      'Authenticated by the function itself: lib/http/endpoint.ts verifies the access token (the signature ' +
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
  alarmTopicKey: {
    id: 'AwsSolutions-KMS5',
    reason:
      'The key encrypts only alarm notifications on their way to SNS subscribers: no data is kept under it. ' +
      'Each yearly rotation would add $1 a month for two years (KMS prices every kept key version), ' +
      "past the deployment's $5 a month at rest (docs/scale.md).",
  },
  streamListing: {
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      "dynamodb:ListStreams, which a stream mapping (the stream reader's) needs, takes no resource " +
      'narrower than *; it only lists stream ARNs. Every other action of that function names the stream, ' +
      "its work queues or its dead-letter queue (X-Ray's aside, see xrayTracing).",
  },
  xrayTracing: {
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'xray:PutTraceSegments and xray:PutTelemetryRecords, which Lambda active tracing needs (only with -c tracing=true), ' +
      'take no resource narrower than *; they write trace data and read nothing.',
  },
  deadLetterQueue: {
    id: 'AwsSolutions-SQS3',
    reason:
      "This queue is itself a dead-letter destination (of the mailer's, the team cleanup's or the webhook fan-out's stream mapping, or of the " +
      "SES events function's asynchronous invocations): it holds what failed every retry, raises an alarm, and is drained " +
      'by a person; a dead-letter queue of its own would only move them again.',
  },
  rotatedFromFunctionStack: {
    id: 'AwsSolutions-SMG4',
    reason:
      'Rotated every 30 days: the RotationSchedule lives in the Roster stack beside its rotation function (KeysRotate) and ' +
      "names this secret by ARN. It cannot live here: this stack would then need the function's stack, which needs this one.",
  },
  providerSecrets: {
    id: 'AwsSolutions-SMG4',
    reason:
      "The providers' OAuth client secrets are issued by each provider's console (Google, GitHub, Okta, Entra ID) and " +
      'can only be rotated there; a rotation function here could not make a new one. docs/sso.md says how the operator replaces them.',
  },
  codeDeployRole: {
    id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
    reason:
      "AWS's own policy for CodeDeploy's Lambda deployments, which CDK's LambdaDeploymentGroup attaches to any role it is " +
      'given: it reads alarms, reads and moves aliases, and (unused here) publishes deployment triggers, invokes ' +
      "CodeDeployHook_* functions and reads revisions from S3; it touches no data of Roster's. One role for every group.",
  },
} as const satisfies Record<string, Acknowledgment>;

export type NagAcknowledgement = keyof typeof NAG_ACKNOWLEDGEMENTS;

/** Records one reviewed acknowledgement on these constructs (and so on everything under them). */
export const acknowledge = (which: NagAcknowledgement, ...scopes: IConstruct[]): void => {
  for (const scope of scopes) Validations.of(scope).acknowledge(NAG_ACKNOWLEDGEMENTS[which]);
};
