import { openBytes, sealBytes } from '#lib/core/aead.ts';
import { serviceUnavailable } from '#lib/core/errors.ts';
import { log } from '#lib/core/log.ts';
import { KeyCache, unavailable } from './keys/cache.ts';
import { type SealKey, newestKeyOf } from './keys/model.ts';
import { loadPrivateKeyset } from './private-keyset.ts';

/**
 * Second-factor secrets (TOTP keys) are stored sealed (lib/core/aead.ts) under a sealing key kept in the
 * signing keys' secret, never in the table (docs/mfa.md, "Sealing keys"). The sealed text names
 * its key, so keys rotate without re-sealing everything at once: the newest seals, every listed
 * key opens (a kid this process does not know yet makes it read the keys again), and a secret
 * opened with an older key is sealed again by the write that uses it.
 * The additional data binds a sealed secret to its factor: copied onto another item, it fails.
 */
const sealKeys = new KeyCache<SealKey[]>(async () => (await loadPrivateKeyset('seal second-factor secrets')).sealKeys ?? []);

const keys = (): Promise<SealKey[]> => sealKeys.get().catch(unavailable);

const FORMAT = 'v1';

export const seal = async (secret: Uint8Array, binding: string): Promise<string> => {
  const key = newestKeyOf(await keys());
  if (!key) {
    // A deployment from before sealing keys: its next key rotation adds one (docs/operations.md).
    log.error(
      'cannot seal a second factor',
      new Error('no sealing key in the signing keys secret: rotate the signing keys once to add one'),
    );
    throw serviceUnavailable(60, 'Second factors cannot be set up yet on this deployment.');
  }
  return [FORMAT, key.kid, sealBytes(Buffer.from(key.key, 'base64url'), secret, binding).toString('base64url')].join('.');
};

/** The secret, and whether it was sealed under an older key than the newest (to seal again). Throws when it cannot be opened. */
export const unseal = async (sealed: string, binding: string): Promise<{ secret: Uint8Array; stale: boolean }> => {
  const [format, kid, body] = sealed.split('.');
  let all = await keys();
  if (!all.some((k) => k.kid === kid)) {
    // Sealed by a process that loaded a newer keyset than this one's cache: read it again (once).
    sealKeys.forget();
    all = await keys();
  }
  const key = all.find((k) => k.kid === kid);
  if (format !== FORMAT || !key || !body) throw new Error(`sealed with an unknown key: ${kid ?? '(none)'}`);
  const secret = openBytes(Buffer.from(key.key, 'base64url'), Buffer.from(body, 'base64url'), binding);
  return { secret: new Uint8Array(secret), stale: newestKeyOf(all)?.kid !== key.kid };
};
