import { db } from '#lib/db/service.ts';

/**
 * Moves an invite's expiry into the past, as if its days had gone by: still PENDING, and still in
 * gsi3 (in the bucket of its new expiry), where the sweeper would find it.
 */
export const expireInvite = async (inviteUuid: string, agoMs = 1000): Promise<void> => {
  const { data: i } = await db().entities.invite.get({ inviteUuid }).go({ consistent: true });
  if (!i) throw new Error(`no invite ${inviteUuid}`);
  await db()
    .entities.invite.patch({ inviteUuid })
    .set({ status: i.status, expiresAt: new Date(Date.now() - agoMs).toISOString() })
    .composite({ teamId: i.teamId, email: i.email, inviteId: i.inviteId })
    .go();
};
