import { describe, expect, it } from 'vitest';
import { seal, unseal } from '#lib/auth/factor-seal.ts';
import { SEAL_KEY_MAX_AGE_DAYS, addKey, rotateKeyset, withFreshSealKey } from '#lib/auth/keys/model.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const daysAfter = (date: Date, days: number) => new Date(date.getTime() + days * 86_400_000);

describe('sealing second-factor secrets (lib/auth/factor-seal.ts)', () => {
  it('opens what it sealed, for the same binding only, and says when a newer key should seal it again', async () => {
    const secret = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    const sealed = await seal(secret, 'totp user-a factor-1');
    expect(sealed).toMatch(/^v1\.seal-[\w-]+\.[\w-]{60,}$/);
    expect(sealed).not.toContain(Buffer.from(secret).toString('base64url'));
    const opened = await unseal(sealed, 'totp user-a factor-1');
    expect([...opened.secret]).toEqual([...secret]);
    expect(opened.stale).toBe(false);
    // Copied onto another factor or user, it does not open; nor does a changed byte.
    await expect(unseal(sealed, 'totp user-a factor-2')).rejects.toThrow();
    await expect(unseal(sealed, 'totp user-b factor-1')).rejects.toThrow();
    const flipped = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}${sealed.slice(-1)}`;
    await expect(unseal(flipped, 'totp user-a factor-1')).rejects.toThrow();
    await expect(unseal(sealed.replace(/^v1\.[^.]+/, 'v1.seal-unknown'), 'totp user-a factor-1')).rejects.toThrow(/unknown key/);
  });
});

describe('a sealing key this process does not know yet', () => {
  it('is read again from the keyset, once, instead of failing', async () => {
    const { config } = await import('#lib/core/config.ts');
    const { readKeysetFile, placeKeysetFile } = await import('#lib/auth/keys/file-store.ts');
    const { forgetCachedKeys } = await import('#lib/auth/keys/cache.ts');
    await seal(new Uint8Array(20), 'warm');
    const before = (await readKeysetFile(config.dataDir)) as NonNullable<Awaited<ReturnType<typeof readKeysetFile>>>;
    const newer = [...(before.sealKeys ?? []), ...withFreshSealKey([], new Date())];
    // Another process sealed under a newer key...
    await placeKeysetFile(config.dataDir, { ...before, sealKeys: newer }, 'replace');
    forgetCachedKeys();
    const sealed = await seal(new Uint8Array([7, 7, 7]), 'totp u f');
    expect(sealed.split('.')[1]).toBe(newer.at(-1)?.kid);
    // ...while this one still holds the older keyset in its cache.
    await placeKeysetFile(config.dataDir, before, 'replace');
    forgetCachedKeys();
    await seal(new Uint8Array(20), 'warm');
    await placeKeysetFile(config.dataDir, { ...before, sealKeys: newer }, 'replace');
    expect([...(await unseal(sealed, 'totp u f')).secret]).toEqual([7, 7, 7]);
  });
});

describe('sealing keys in the keyset (lib/auth/keys/model.ts)', () => {
  it('every rotation keeps them all, and adds one only when the newest is a year old', async () => {
    const first = withFreshSealKey(undefined, T0);
    expect(first).toHaveLength(1);
    expect(first[0]?.key).toMatch(/^[\w-]{43}$/);
    const rotated = await rotateKeyset({ keys: [], sealKeys: first }, daysAfter(T0, 90));
    expect(rotated.sealKeys).toEqual(first);
    const aged = await addKey(rotated, daysAfter(T0, SEAL_KEY_MAX_AGE_DAYS));
    expect(aged.sealKeys).toHaveLength(2);
    expect(aged.sealKeys?.[0]).toEqual(first[0]);
    // A keyset from before sealing keys gets its first at its next rotation.
    expect((await addKey({ keys: [] }, T0)).sealKeys).toHaveLength(1);
  });
});
