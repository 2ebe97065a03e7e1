/**
 * Invites to an address Roster no longer mails: suppressed the way production does it (an SES
 * bounce or complaint fed as an SNS event through functions/mail-events.ts), then invited and
 * re-sent through the API.
 */
import { randomUUID } from 'node:crypto';
import type { SNSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler } from '#functions/mail-events.ts';
import { db } from '#lib/db/service.ts';
import { SUPPRESSED_MESSAGE } from '#lib/mail/suppression.ts';
import { type TestUser, addMember, createTeam, freshEmail, signUp, useApi } from '../helpers/api.ts';

const api = useApi();

const sesEvent = (eventType: 'Bounce' | 'Complaint', email: string, bounceType = 'Permanent'): SNSEvent => {
  const timestamp = new Date().toISOString();
  const body =
    eventType === 'Bounce'
      ? {
          bounce: {
            bounceType,
            bounceSubType: 'General',
            bouncedRecipients: [{ emailAddress: email, status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
            timestamp,
          },
        }
      : { complaint: { complainedRecipients: [{ emailAddress: email }], complaintFeedbackType: 'abuse', timestamp } };
  const message = { eventType, ...body, mail: { timestamp, messageId: randomUUID(), source: 'roster@example.com', destination: [email] } };
  return {
    Records: [
      { Sns: { MessageId: randomUUID(), TopicArn: 'arn:aws:sns:us-east-1:123456789012:ses-events', Message: JSON.stringify(message) } },
    ],
  } as unknown as SNSEvent;
};

const feed = (event: SNSEvent) => handler(event);

const invite = (by: TestUser, slug: string, email: string, role = 'MEMBER') =>
  api.call('POST', `/api/teams/${slug}/invites`, { token: by.token, json: { email, role } });

const SUPPRESSED = {
  error: { code: 'validation_failed', message: 'Some fields are missing or invalid.', fields: { email: SUPPRESSED_MESSAGE } },
};

describe('invites to suppressed addresses', () => {
  it('answer 422 on `email`, for a bounced and for a complained address, and write nothing, the mail allowance included', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const bounced = freshEmail('bounced');
    const complained = freshEmail('complained');
    await feed(sesEvent('Bounce', bounced));
    await feed(sesEvent('Complaint', complained));

    for (const email of [bounced, complained]) {
      const res = await invite(owner, team.slug, email);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(SUPPRESSED);
    }
    const list = await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token });
    expect(list.body.data).toEqual([]);
    // Refused before the team's mail allowance is touched: its bucket was never written.
    expect(
      (
        await db()
          .entities.rateLimit.get({ scope: 'team-mail', subject: String(team.id) })
          .go({ consistent: true })
      ).data,
    ).toBeNull();
  });

  it('match addresses case-insensitively, whichever side has the capitals', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const upperAtSes = freshEmail('upper-at-ses');
    await feed(sesEvent('Bounce', upperAtSes.toUpperCase()));
    expect((await invite(owner, team.slug, upperAtSes)).status).toBe(422);
    const upperInInvite = freshEmail('upper-in-invite');
    await feed(sesEvent('Bounce', upperInInvite));
    expect((await invite(owner, team.slug, ` ${upperInInvite.toUpperCase()} `)).body).toEqual(SUPPRESSED);
  });

  it('leave other addresses, and softly bounced ones, alone', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const bounced = freshEmail('bounced');
    const soft = freshEmail('soft');
    await feed(sesEvent('Bounce', bounced));
    await feed(sesEvent('Bounce', soft, 'Transient'));
    expect((await invite(owner, team.slug, freshEmail('fine'))).status).toBe(201);
    expect((await invite(owner, team.slug, soft)).status).toBe(201);
    // Same local part, other domain: another address.
    expect((await invite(owner, team.slug, bounced.replace('@example.com', '@example.org'))).status).toBe(201);
  });

  it('come after the role checks: a member learns nothing about the address', async () => {
    const owner = await signUp(api, 'owner');
    const admin = await signUp(api, 'admin');
    const member = await signUp(api, 'member');
    const team = await createTeam(api, owner);
    await addMember(api, team.slug, owner, admin, 'ADMIN');
    await addMember(api, team.slug, owner, member, 'MEMBER');
    const bounced = freshEmail('bounced');
    await feed(sesEvent('Bounce', bounced));
    expect((await invite(member, team.slug, bounced)).status).toBe(403);
    expect((await invite(admin, team.slug, bounced, 'OWNER')).status).toBe(403);
    expect((await invite(admin, team.slug, bounced, 'ADMIN')).status).toBe(422);
    const outsider = await signUp(api, 'outsider');
    expect((await invite(outsider, team.slug, bounced)).status).toBe(404);
  });

  it('a resend of an invite whose address bounced since answers the same, until the suppression is lifted', async () => {
    const owner = await signUp(api, 'owner');
    const team = await createTeam(api, owner);
    const email = freshEmail('later');
    expect((await invite(owner, team.slug, email)).status).toBe(201);
    const [pending] = (await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token })).body.data;
    const resend = () => api.call('POST', `/api/teams/${team.slug}/invites/${pending.id}/resend`, { token: owner.token });

    await feed(sesEvent('Complaint', email));
    const refused = await resend();
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(SUPPRESSED);
    // A re-invite is refused too, and the pending invite is left as it was.
    expect((await invite(owner, team.slug, email, 'ADMIN')).status).toBe(422);
    const after = (await api.call('GET', `/api/teams/${team.slug}/invites`, { token: owner.token })).body.data;
    expect(after).toEqual([pending]);

    // An id that is not there is still 404.
    expect((await api.call('POST', `/api/teams/${team.slug}/invites/1/resend`, { token: owner.token })).status).toBe(404);

    // The operator's lift (docs/operations.md): delete the item.
    await db().entities.mailSuppression.delete({ email }).go();
    expect((await resend()).status).toBe(200);
    expect((await invite(owner, team.slug, email, 'ADMIN')).status).toBe(201);
  });
});
