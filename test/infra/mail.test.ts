import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DKIM_OUTPUTS } from '#infra/mail-identity.ts';
import { LOG_TRANSPORT_NOTICE } from '#infra/background.ts';
import { MAILER, MAIL_EVENTS, OUTBOX_SWEEP } from '#lib/http/background.ts';
import { actionsOf, type Resource, type Synthesized, synth } from './template.ts';

/**
 * The mail settings (issue 11, item 1) on the synthesized templates: without them the mail is
 * logged and the stack says so; `-c sesDomain` creates the domain identity with Easy DKIM and
 * outputs its DNS records; with SES (either way) a configuration set sends bounces and complaints
 * through an SNS topic to the mail-events function, and the senders may send through the identity
 * and that configuration set only.
 */
const SENDERS = [MAILER.name, OUTBOX_SWEEP.name];

/** An SES ARN in this account and region, as the template writes it: `arn:…:ses:…:<resource>` and a Ref after it, if any. */
const sesArn = (resource: string, ref?: { Ref: string }) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':ses:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:${resource}`,
      ...(ref ? [ref] : []),
    ],
  ],
});

const queueOf = (built: Synthesized, id: string): string => {
  const found = Object.keys(built.dataResources).find((key) => built.dataResources[key]?.Type === 'AWS::SQS::Queue' && key.startsWith(id));
  if (!found) throw new Error(`no queue ${id}`);
  return found;
};

describe('without mail settings', () => {
  const built = synth();

  it('logs each message instead of sending it, and says so in an output and a synth warning', () => {
    for (const name of SENDERS) expect(built.variables(name), name).toMatchObject({ MAIL_TRANSPORT: 'log' });
    for (const name of SENDERS) expect(built.variables(name), name).not.toHaveProperty('SES_CONFIGURATION_SET');
    expect(built.json.Outputs.Mail?.Value).toBe(LOG_TRANSPORT_NOTICE);
    expect(LOG_TRANSPORT_NOTICE).toMatch(/mail is NOT sent .*-c sesDomain=.*-c mailFrom=.*docs\/operations\.md/);
    Annotations.fromStack(built.stack).hasWarning('/Roster', Match.stringLikeRegexp('mail is NOT sent'));
  });

  it('makes no SES identity, configuration set, topic or events function, and grants no SES', () => {
    for (const type of ['AWS::SES::EmailIdentity', 'AWS::SES::ConfigurationSet', 'AWS::SNS::Subscription'])
      expect(built.ofType(type), type).toEqual([]);
    expect(Object.values(built.dataResources).filter((r) => r.Type === 'AWS::SES::EmailIdentity')).toEqual([]);
    expect(built.stack.background.has(MAIL_EVENTS.name)).toBe(false);
    expect(
      built
        .allStatements()
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('ses:')),
    ).toEqual([]);
  });
});

describe('with -c sesDomain (the stack creates the identity)', () => {
  const built = synth({ sesDomain: 'example.com' });
  const { dataJson, dataResources, ofType, only, logicalId, statementsOf, variables } = built;
  const [configurationSetId, configurationSet] = only('AWS::SES::ConfigurationSet');
  const topicId = mailTopic(built);

  it('creates the domain identity in the data stack, with Easy DKIM (RSA 2048), and outputs its three CNAME records', () => {
    const identities = Object.entries(dataResources).filter(([, r]) => r.Type === 'AWS::SES::EmailIdentity');
    expect(identities).toHaveLength(1);
    const [identityId, identity] = identities[0] as [string, Resource];
    expect(identity.Properties).toEqual({ EmailIdentity: 'example.com', DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' } });
    // Turning SES off must not delete it under a mailer that still sends through it (the data stack deploys first).
    expect([identity.DeletionPolicy, identity.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    DKIM_OUTPUTS.forEach((name, i) => {
      expect(dataJson.Outputs[name]?.Value, name).toEqual({
        'Fn::Join': [
          ' ',
          [
            { 'Fn::GetAtt': [identityId, `DkimDNSTokenName${i + 1}`] },
            'CNAME',
            { 'Fn::GetAtt': [identityId, `DkimDNSTokenValue${i + 1}`] },
          ],
        ],
      });
      expect(dataJson.Outputs[name]?.Description).toContain('example.com');
    });
  });

  it('sends bounces and complaints (only) through a configuration set with reputation metrics to an SNS topic SES alone may publish to', () => {
    expect(configurationSet.Properties).toMatchObject({
      ReputationOptions: { ReputationMetricsEnabled: true },
      SendingOptions: { SendingEnabled: true },
    });
    const [, destination] = only('AWS::SES::ConfigurationSetEventDestination');
    expect(destination.Properties).toEqual({
      ConfigurationSetName: { Ref: configurationSetId },
      EventDestination: { Enabled: true, MatchingEventTypes: ['bounce', 'complaint'], SnsDestination: { TopicARN: { Ref: topicId } } },
    });
    const policy = ofType('AWS::SNS::TopicPolicy').find(
      ([, p]) => JSON.stringify(p.Properties.Topics) === JSON.stringify([{ Ref: topicId }]),
    )?.[1];
    const statements = (policy?.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    const allows = statements.filter((s) => s.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    expect(allows[0]).toMatchObject({ Principal: { Service: 'ses.amazonaws.com' }, Action: 'sns:Publish' });
    expect(allows[0]?.Condition).toEqual({
      StringEquals: {
        'AWS:SourceAccount': { Ref: 'AWS::AccountId' },
        'AWS:SourceArn': sesArn('configuration-set/', { Ref: configurationSetId }),
      },
    });
    // Only over TLS.
    expect(
      statements.some(
        (s) => s.Effect === 'Deny' && JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
      ),
    ).toBe(true);
  });

  it('has the topic invoke the mail-events function, which retries twice and then dead-letters to the data stack', () => {
    const fnArn = { 'Fn::GetAtt': [logicalId(MAIL_EVENTS.name), 'Arn'] };
    const [, subscription] = only('AWS::SNS::Subscription');
    expect(subscription.Properties).toEqual({ Protocol: 'lambda', TopicArn: { Ref: topicId }, Endpoint: fnArn });
    const permission = ofType('AWS::Lambda::Permission').find(([, p]) => p.Properties.Principal === 'sns.amazonaws.com')?.[1];
    expect(permission?.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', FunctionName: fnArn, SourceArn: { Ref: topicId } });
    const [, invokeConfig] = only('AWS::Lambda::EventInvokeConfig');
    expect(invokeConfig.Properties).toMatchObject({
      FunctionName: { Ref: logicalId(MAIL_EVENTS.name) },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueOf(built, 'MailEventsDeadLetters'), 'Arn'] } } },
    });
  });

  it('lets the mail-events function use exactly its actions on the table and feed its queue, nothing else', () => {
    const fn = built.functionOf(MAIL_EVENTS.name);
    expect(fn.Properties.Timeout).toBe(MAIL_EVENTS.timeoutSeconds);
    expect(variables(MAIL_EVENTS.name)).toEqual({
      TABLE_NAME: { Ref: Object.keys(dataResources).find((id) => dataResources[id]?.Type === 'AWS::DynamoDB::Table') },
    });
    const actions = statementsOf(MAIL_EVENTS.name)
      .flatMap(actionsOf)
      .filter((a) => !a.startsWith('logs:'))
      .sort();
    expect(actions).toEqual(
      [...MAIL_EVENTS.actions.map((a) => `dynamodb:${a}`), 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'].sort(),
    );
  });

  it.each(SENDERS)(
    '%s sends with SES as no-reply@ the domain, through the configuration set, and may send through exactly the identity and the set',
    (name) => {
      expect(variables(name)).toMatchObject({
        MAIL_TRANSPORT: 'ses',
        MAIL_FROM: 'Roster <no-reply@example.com>',
        SES_CONFIGURATION_SET: { Ref: configurationSetId },
        PUBLIC_URL: built.json.Outputs.ApiUrl?.Value,
      });
      const ses = statementsOf(name).filter((s) => actionsOf(s).some((a) => a.startsWith('ses:')));
      expect(ses.flatMap(actionsOf)).toEqual(['ses:SendEmail']);
      expect(ses.flatMap((s) => [s.Resource].flat())).toEqual([
        sesArn('identity/example.com'),
        sesArn('configuration-set/', { Ref: configurationSetId }),
      ]);
    },
  );

  it("watches the mail-events function's dead-letter queue and SES reputation (the function itself with -c functionAlarms=true)", () => {
    const alarms = JSON.stringify(ofType('AWS::CloudWatch::Alarm'));
    expect(alarms).toContain(`"${queueOf(built, 'MailEventsDeadLetters')}"`);
    expect(alarms).toContain('Reputation.BounceRate');
    expect(alarms).not.toContain(`"${logicalId(MAIL_EVENTS.name)}"`);
  });

  it('says in the Mail output how mail goes, where the DNS records are, and that a new account is in the SES sandbox', () => {
    const text = JSON.stringify(built.json.Outputs.Mail?.Value);
    for (const part of [
      'sent with SES as Roster <no-reply@example.com> through example.com',
      'DkimCname outputs of RosterData',
      'sandbox',
      'docs/operations.md',
    ]) {
      expect(text).toContain(part);
    }
  });
});

describe('switching mail settings', () => {
  it("keeps the data stack's exports, so a deploy that turns SES off removes nothing the deployed functions' stack imports", () => {
    const exportsOf = (built: Synthesized) =>
      Object.values(built.dataJson.Outputs)
        .flatMap((o) => (o.Export ? [o.Export.Name] : []))
        .sort();
    const plain = synth();
    const withSes = synth({ sesDomain: 'example.com' });
    expect(exportsOf(plain)).toEqual(exportsOf(withSes));
    // Every name the SES stack imports is exported by the data stack without SES too.
    const imported = [...JSON.stringify(withSes.rawJson).matchAll(/"Fn::ImportValue":"([^"]+)"/g)].map((m) => m[1]);
    expect(imported.length).toBeGreaterThan(0);
    for (const name of imported) expect(exportsOf(plain)).toContain(name);
  });
});

describe('with -c sesIdentity (verified already), -c mailFrom and -c publicUrl', () => {
  const built = synth({
    sesIdentity: 'roster@example.org',
    mailFrom: 'Roster Invites <roster@example.org>',
    publicUrl: 'https://roster.example.org/',
  });

  it('creates no identity and no DNS outputs, but the configuration set, its topic and the mail-events function', () => {
    expect(Object.values(built.dataResources).filter((r) => r.Type === 'AWS::SES::EmailIdentity')).toEqual([]);
    for (const name of DKIM_OUTPUTS) expect(built.dataJson.Outputs).not.toHaveProperty(name);
    expect(built.ofType('AWS::SES::ConfigurationSet')).toHaveLength(1);
    expect(built.stack.background.has(MAIL_EVENTS.name)).toBe(true);
  });

  it.each(SENDERS)('%s sends as the given sender, with links to the given URL, through that identity only', (name) => {
    expect(built.variables(name)).toMatchObject({
      MAIL_TRANSPORT: 'ses',
      MAIL_FROM: 'Roster Invites <roster@example.org>',
      PUBLIC_URL: 'https://roster.example.org',
    });
    const ses = built.statementsOf(name).filter((s) => actionsOf(s).includes('ses:SendEmail'));
    expect(JSON.stringify(ses)).toContain(':identity/roster@example.org"');
  });
});

/** The SES events' topic: the one topic outside the monitoring. */
function mailTopic(built: Synthesized): string {
  const topics = built.ofType('AWS::SNS::Topic').filter(([id]) => !id.startsWith('Monitoring'));
  expect(topics).toHaveLength(1);
  return (topics[0] as [string, Resource])[0];
}
