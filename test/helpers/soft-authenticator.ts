import { type KeyObject, createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { type CBORType, encodeCBOR } from '@levischuck/tiny-cbor';

/**
 * A WebAuthn authenticator in Node, for the API tests and the bench: it answers
 * navigator.credentials.create and .get as a browser would serialize them (toJSON()), with an
 * ES256 key, attestation `none` and a signature counter. The real one (Chromium's virtual
 * authenticator) is browser/passkeys.test.ts; this one lets a test bend what an authenticator
 * says: the user not verified, a counter that went back, another origin.
 */

interface Held {
  id: string;
  key: KeyObject;
  userHandle: string;
  counter: number;
}

type Options = { challenge: string; rp?: { id?: string }; rpId?: string; user?: { id: string }; allowCredentials?: { id: string }[] };

const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

const FLAGS = { up: 0x01, uv: 0x04, at: 0x40 };

export class SoftAuthenticator {
  readonly held = new Map<string, Held>();

  readonly origin: string;
  readonly rpId: string;

  constructor(origin: string, rpId: string) {
    this.origin = origin;
    this.rpId = rpId;
  }

  private authData(flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(this.rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create({ publicKey: options }), as toJSON() writes the answer. */
  create(options: Options, { uv = true, origin = this.origin }: { uv?: boolean; origin?: string } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const credentialId = randomBytes(32);
    const id = credentialId.toString('base64url');
    const cose = encodeCBOR(
      new Map<number, Uint8Array | number>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x as string, 'base64url')],
        [-3, Buffer.from(jwk.y as string, 'base64url')],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, credentialId, Buffer.from(cose)]);
    const authData = this.authData(FLAGS.up | FLAGS.at | (uv ? FLAGS.uv : 0), 0, attested);
    const attestationObject = encodeCBOR(
      new Map<string, CBORType>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, CBORType>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    this.held.set(id, { id, key: privateKey, userHandle: options.user?.id ?? '', counter: 0 });
    return {
      id,
      rawId: id,
      type: 'public-key' as const,
      authenticatorAttachment: 'platform' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge, origin).toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
    };
  }

  /**
   * navigator.credentials.get({ publicKey: options }) with credential `id` (default: the first
   * allowed, else the first held). `counter`: the count to sign (default: one more than the last).
   */
  get(
    options: Options,
    { id, uv = true, origin = this.origin, counter }: { id?: string; uv?: boolean; origin?: string; counter?: number } = {},
  ) {
    const chosen = id ?? options.allowCredentials?.[0]?.id ?? [...this.held.keys()][0];
    const held = chosen === undefined ? undefined : this.held.get(chosen);
    if (!held) throw new Error('no such credential on this authenticator');
    held.counter = counter ?? held.counter + 1;
    const authData = this.authData(FLAGS.up | (uv ? FLAGS.uv : 0), held.counter);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), held.key);
    return {
      id: held.id,
      rawId: held.id,
      type: 'public-key' as const,
      authenticatorAttachment: 'platform' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: held.userHandle,
      },
    };
  }
}
