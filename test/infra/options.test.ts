import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPTIONS, type DeployOptions, deployOptions } from '#infra/options.ts';

/** The options as infra/options.ts reads them from this context (what `cdk deploy -c name=value` gives). */
const optionsOf = (context: Record<string, unknown>): DeployOptions => deployOptions(new App({ context }).node);

const STREAM = 'arn:aws:dynamodb:eu-west-1:123456789012:table/roster-restored/stream/2026-01-02T03:04:05.678';

describe('deploy options (-c name=value)', () => {
  it("defaults to what deploys on a fresh account: gradual deploys on, tracing off, no alarm e-mail, mail logged, the data stack's table", () => {
    expect(optionsOf({})).toEqual(DEFAULT_OPTIONS);
    expect(DEFAULT_OPTIONS).toMatchObject({
      gradualDeploy: false,
      tracing: false,
      alarmEmail: undefined,
      mail: { transport: 'log', publicUrl: undefined },
      table: undefined,
    });
  });

  it('reads the flags as true or false, strings or booleans, and refuses anything else with one sentence', () => {
    expect(optionsOf({ gradualDeploy: 'false', tracing: 'true' })).toMatchObject({ gradualDeploy: false, tracing: true });
    expect(optionsOf({ gradualDeploy: false, tracing: true })).toMatchObject({ gradualDeploy: false, tracing: true });
    expect(() => optionsOf({ gradualDeploy: 'no' })).toThrow('context gradualDeploy must be true or false, not "no"');
    expect(() => optionsOf({ tracing: '1' })).toThrow('context tracing must be true or false, not "1"');
  });

  it('takes one alarm e-mail address', () => {
    expect(optionsOf({ alarmEmail: ' ops@example.com ' }).alarmEmail).toBe('ops@example.com');
    for (const bad of ['ops', 'ops@example.com,dev@example.com', 'Ops <ops@example.com>', '', 42]) {
      expect(() => optionsOf({ alarmEmail: bad }), String(bad)).toThrow(
        /^context alarmEmail must be (one e-mail address|a non-empty string)/,
      );
    }
  });

  it('sends with SES through a domain the stack creates, from no-reply@ it by default or the given sender at it', () => {
    expect(optionsOf({ sesDomain: 'Mail.Example.com' }).mail).toEqual({
      transport: 'ses',
      identity: 'mail.example.com',
      createIdentity: true,
      from: 'Roster <no-reply@mail.example.com>',
      publicUrl: undefined,
    });
    expect(
      optionsOf({ sesDomain: 'example.com', mailFrom: '"Team Roster" <invites@Example.com>', publicUrl: 'https://roster.example.com/' })
        .mail,
    ).toEqual({
      transport: 'ses',
      identity: 'example.com',
      createIdentity: true,
      from: '"Team Roster" <invites@Example.com>',
      publicUrl: 'https://roster.example.com',
    });
  });

  it('sends through an identity verified already (a domain or one address), which the stack does not create', () => {
    expect(optionsOf({ sesIdentity: 'example.org' }).mail).toMatchObject({
      transport: 'ses',
      identity: 'example.org',
      createIdentity: false,
      from: 'Roster <no-reply@example.org>',
    });
    expect(optionsOf({ sesIdentity: 'roster@example.org' }).mail).toMatchObject({
      identity: 'roster@example.org',
      createIdentity: false,
      from: 'roster@example.org',
    });
    expect(optionsOf({ sesIdentity: 'roster@example.org', mailFrom: 'Roster <roster@example.org>' }).mail).toMatchObject({
      from: 'Roster <roster@example.org>',
    });
  });

  it('refuses mail settings SES would refuse, or that mean nothing, at synth with one sentence', () => {
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ sesDomain: 'example.com', sesIdentity: 'example.com' }, /^context sesDomain and sesIdentity exclude each other/],
      [{ mailFrom: 'roster@example.com' }, /^context mailFrom needs sesDomain or sesIdentity/],
      [{ sesDomain: 'localhost' }, /^context sesDomain must be a domain name such as example.com, not "localhost"$/],
      [{ sesDomain: 'exa mple.com' }, /^context sesDomain must be a domain name/],
      [{ sesDomain: '-x.example.com' }, /^context sesDomain must be a domain name/],
      [{ sesDomain: 'https://example.com' }, /^context sesDomain must be a domain name/],
      [{ sesIdentity: 'not an identity' }, /^context sesIdentity must be a domain or an e-mail address verified in SES/],
      [
        { sesDomain: 'example.com', mailFrom: 'roster@example.org' },
        /^context mailFrom \(roster@example.org\) must be an address at the SES identity example.com/,
      ],
      [{ sesDomain: 'example.com', mailFrom: 'roster@mail.example.com' }, /must be an address at the SES identity example.com/],
      [
        { sesIdentity: 'roster@example.org', mailFrom: 'other@example.org' },
        /^context mailFrom \(other@example.org\) must be the SES identity roster@example.org/,
      ],
      [
        { sesDomain: 'example.com', mailFrom: 'Eve\r\nBcc: x@example.com <eve@example.com>' },
        /^context mailFrom must be an address or "Name <address>" on one line/,
      ],
      [{ sesDomain: 'example.com', mailFrom: 'a@example.com, b@example.com' }, /^context mailFrom must be an address or "Name <address>"/],
      [{ sesDomain: '' }, /^context sesDomain must be a non-empty string/],
    ];
    for (const [context, message] of refused) expect(() => optionsOf(context), JSON.stringify(context)).toThrow(message);
  });

  it("takes the links' base as an absolute https URL only", () => {
    expect(optionsOf({ publicUrl: 'https://roster.example.com/app//' }).mail.publicUrl).toBe('https://roster.example.com/app');
    for (const bad of [
      'http://roster.example.com',
      'roster.example.com',
      '/invites',
      'https://user:pw@roster.example.com',
      'https://roster.example.com/?a=1',
      'https://roster.example.com/#x',
    ]) {
      expect(() => optionsOf({ publicUrl: bad }), bad).toThrow(
        /^context publicUrl must be an absolute https URL without credentials, query or fragment/,
      );
    }
  });

  it("moves the functions to a restored table only given its name and its stream's ARN together", () => {
    expect(optionsOf({ tableName: 'roster-restored', tableStreamArn: STREAM }).table).toEqual({
      tableName: 'roster-restored',
      tableStreamArn: STREAM,
    });
    expect(() => optionsOf({ tableName: 'roster-restored' })).toThrow(/^context tableName and tableStreamArn go together/);
    expect(() => optionsOf({ tableStreamArn: STREAM })).toThrow(/^context tableName and tableStreamArn go together/);
    expect(() => optionsOf({ tableName: 'x', tableStreamArn: STREAM })).toThrow(/^context tableName must be a DynamoDB table name/);
    expect(() => optionsOf({ tableName: 'roster-other', tableStreamArn: STREAM })).toThrow(
      /^context tableStreamArn must be the stream ARN of table roster-other/,
    );
    expect(() =>
      optionsOf({ tableName: 'roster-restored', tableStreamArn: 'arn:aws:dynamodb:eu-west-1:123456789012:table/roster-restored' }),
    ).toThrow(/^context tableStreamArn must be the stream ARN/);
  });
});
