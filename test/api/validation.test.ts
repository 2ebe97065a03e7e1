/**
 * SECURITY-TESTS.md J1 and J2 with fast-check (fixed seed): every body schema through the one
 * `validate` the endpoints use, and the real POST /api/teams handler driven by synthetic API
 * Gateway events carrying arbitrary raw bodies and content types.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as createTeamHandler } from '#functions/teams-create.ts';
import { handler as signUpHandler } from '#functions/auth-signup.ts';
import { config } from '#lib/core/config.ts';
import { AppError } from '#lib/core/errors.ts';
import { lambdaContext, toApiGatewayEvent } from '#lib/http/apigw.ts';
import { FUNCTION_DEFAULTS } from '#lib/http/routes.ts';
import { validate } from '#lib/http/validation.ts';
import { InviteBody, RoleBody, SignInBody, SignUpBody, TeamBody } from '#lib/wire/schemas.ts';

const RUNS = { seed: 42, numRuns: 100 } as const;

/** The contract's slug rule, written out here rather than imported, so the test is an oracle. */
const SLUG_RULE = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])$/;
const ROLES = ['OWNER', 'ADMIN', 'MEMBER'] as const;

// ---------------------------------------------------------------------------------------------
// Arbitraries, written by hand next to each rule (zod-fast-check does not support zod 4).

const chars = (alphabet: string) => fc.constantFrom(...alphabet);
const LOWER_DIGIT = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Whitespace that String.prototype.trim removes, as a client might leave around a value. */
const padding = fc.string({ unit: chars(' \t\n\r\u00a0\u2003\ufeff'), maxLength: 3 });

/** Addresses zod's e-mail rule accepts, in mixed case; `normal` is what the API must keep. */
const emailParts = fc
  .tuple(
    fc.array(fc.string({ unit: chars(`${LOWER_DIGIT}_+-`), minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 3 }),
    fc.array(fc.tuple(chars(LOWER_DIGIT), fc.string({ unit: chars(`${LOWER_DIGIT}-`), maxLength: 10 })), { minLength: 1, maxLength: 3 }),
    fc.string({ unit: chars('abcdefghijklmnopqrstuvwxyz'), minLength: 2, maxLength: 6 }),
  )
  .map(([atoms, labels, tld]) => `${atoms.join('.')}@${labels.map(([first, rest]) => first + rest).join('.')}.${tld}`);
const email = fc
  .tuple(fc.mixedCase(emailParts), padding, padding)
  .map(([address, before, after]) => ({ raw: `${before}${address}${after}`, normal: address.toLowerCase() }));

const slug = fc
  .tuple(chars(LOWER_DIGIT), fc.string({ unit: chars(`${LOWER_DIGIT}-`), maxLength: 46 }), chars(LOWER_DIGIT))
  .map(([first, middle, last]) => first + middle + last);

/**
 * What docs/api.md refuses in names: control characters (NUL included), unpaired surrogates, line
 * and paragraph separators; and hidden characters, written here as every format or default-ignorable
 * one (stricter than the rule, which keeps joiners and selectors beside visible characters: names
 * with those are tested on their own, so generated names hold none).
 */
const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/** 1 to 100 printable characters once trimmed, any other Unicode; `normal` is the trimmed value. */
const name = fc
  .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }), padding, padding)
  .map(([core, before, after]) => ({ raw: `${before}${core}${after}`, normal: `${before}${core}${after}`.trim() }))
  .filter(({ normal }) => normal.length >= 1 && normal.length <= 100 && !UNPRINTABLE.test(normal));

/** Up to 128 code points keeps a password within 256 UTF-16 units. */
const newPassword = fc.string({ unit: 'binary', minLength: config.passwordMinLength, maxLength: 128 }).filter((p) => p.length <= 256);
const anyPassword = fc.string({ unit: 'binary', minLength: 1, maxLength: 128 }).filter((p) => p.length <= 256);
const role = fc.constantFrom(...ROLES);

/** JSON values that are not strings: what a client sends when it gets a field's type wrong. */
const nonString = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue(), { maxKeys: 3 }),
);

/** Unknown fields a client may add; the contract ignores them. */
const extras = fc.dictionary(
  fc.string({ maxLength: 8 }).map((k) => `x_${k}`),
  fc.jsonValue(),
  { maxKeys: 3 },
);

interface Case {
  /** The request body as sent. */
  input: Record<string, unknown>;
  /** What validate() must return for it. */
  output: Record<string, unknown>;
}

interface SchemaUnderTest {
  name: string;
  schema: Parameters<typeof validate>[0];
  fields: string[];
  valid: fc.Arbitrary<Case>;
}

const withExtras = (arb: fc.Arbitrary<Case>): fc.Arbitrary<Case> =>
  fc.tuple(arb, extras).map(([c, extra]) => ({ input: { ...extra, ...c.input }, output: c.output }));

const SCHEMAS: SchemaUnderTest[] = [
  {
    name: 'SignUpBody',
    schema: SignUpBody,
    fields: ['email', 'password', 'firstName', 'lastName'],
    valid: withExtras(
      fc.record({ email, password: newPassword, firstName: name, lastName: name }).map(({ email: e, password, firstName, lastName }) => ({
        input: { email: e.raw, password, firstName: firstName.raw, lastName: lastName.raw },
        output: { email: e.normal, password, firstName: firstName.normal, lastName: lastName.normal },
      })),
    ),
  },
  {
    name: 'SignInBody',
    schema: SignInBody,
    fields: ['email', 'password'],
    valid: withExtras(
      fc.record({ email, password: anyPassword }).map(({ email: e, password }) => ({
        input: { email: e.raw, password },
        output: { email: e.normal, password },
      })),
    ),
  },
  {
    name: 'TeamBody',
    schema: TeamBody,
    fields: ['name', 'slug'],
    valid: withExtras(
      fc.record({ name, slug }).map(({ name: n, slug: s }) => ({ input: { name: n.raw, slug: s }, output: { name: n.normal, slug: s } })),
    ),
  },
  {
    name: 'RoleBody',
    schema: RoleBody,
    fields: ['role'],
    valid: withExtras(role.map((r) => ({ input: { role: r }, output: { role: r } }))),
  },
  {
    name: 'InviteBody',
    schema: InviteBody,
    fields: ['email', 'role'],
    valid: withExtras(
      fc
        .record({ email, role })
        .map(({ email: e, role: r }) => ({ input: { email: e.raw, role: r }, output: { email: e.normal, role: r } })),
    ),
  },
];

/** The AppError validate() throws for `input`; fails the property when it does not throw one. */
const refusal = (schema: SchemaUnderTest['schema'], input: unknown): AppError => {
  try {
    validate(schema, input);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw new Error(`validate threw a non-AppError: ${String(error)}`, { cause: error });
  }
  throw new Error(`validate accepted ${JSON.stringify(input)}`);
};

// ---------------------------------------------------------------------------------------------

describe.each(SCHEMAS)('$name through validate()', ({ schema, fields, valid }) => {
  it('accepts every valid value, normalised as the contract says, without unknown fields', () => {
    fc.assert(
      fc.property(valid, ({ input, output }) => {
        // Exactly the schema's fields come out: e-mails trimmed and lowercased, names trimmed,
        // slugs, roles and passwords untouched, unknown fields dropped.
        expect(validate(schema, input)).toStrictEqual(output);
      }),
      RUNS,
    );
  });

  it('answers 400 invalid_body, naming the field, when a field is a non-string JSON value', () => {
    fc.assert(
      fc.property(valid, fc.constantFrom(...fields), nonString, ({ input }, field, value) => {
        const error = refusal(schema, { ...input, [field]: value });
        expect(error.code).toBe('invalid_body');
        expect(error.status).toBe(400);
        expect(error.fields).toHaveProperty([field]);
      }),
      RUNS,
    );
  });

  it('answers 422 validation_failed, naming each field, when required fields are missing', () => {
    fc.assert(
      fc.property(valid, fc.subarray(fields, { minLength: 1 }), ({ input }, missing) => {
        const body = Object.fromEntries(Object.entries(input).filter(([key]) => !missing.includes(key)));
        const error = refusal(schema, body);
        expect(error.code).toBe('validation_failed');
        expect(error.status).toBe(422);
        for (const field of missing) expect(error.fields).toHaveProperty([field]);
      }),
      RUNS,
    );
  });
});

describe('field rules', () => {
  it('accepts a slug iff it matches the contract rule, and never rewrites it', () => {
    const nearSlug = fc.oneof(
      slug,
      // Valid slugs broken in one place: an uppercase letter, an edge hyphen, a character outside the set.
      fc.tuple(slug, fc.nat(), chars('A-_. Z/é\u0131#$')).map(([s, at, c]) => {
        const i = at % (s.length + 1);
        return s.slice(0, i) + c + s.slice(i);
      }),
      fc.string({ unit: chars(`${LOWER_DIGIT}-A_ `), maxLength: 52 }),
      fc.string({ maxLength: 60 }),
    );
    fc.assert(
      fc.property(nearSlug, (candidate) => {
        const body = { name: 'Team', slug: candidate };
        if (SLUG_RULE.test(candidate)) {
          expect(validate(TeamBody, body).slug).toBe(candidate);
        } else {
          const error = refusal(TeamBody, body);
          expect(error.code).toBe('validation_failed');
          expect(Object.keys(error.fields ?? {})).toEqual(['slug']);
        }
      }),
      {
        ...RUNS,
        // The boundaries: 1, 2, 48 and 49 characters; uppercase; edge hyphens; a trailing newline.
        examples: [['a'], ['ab'], ['a'.repeat(48)], ['a'.repeat(49)], ['Acme'], ['-ab'], ['ab-'], ['a--b'], ['ab\n']],
      },
    );
  });

  it('refuses a role that is not exactly OWNER, ADMIN or MEMBER with 422', () => {
    const notARole = fc
      .oneof(fc.mixedCase(fc.constantFrom(...ROLES)), fc.string({ maxLength: 10 }))
      .filter((r) => !(ROLES as readonly string[]).includes(r));
    fc.assert(
      fc.property(notARole, (r) => {
        const error = refusal(RoleBody, { role: r });
        expect(error.code).toBe('validation_failed');
        expect(error.fields).toHaveProperty(['role']);
      }),
      { ...RUNS, examples: [['owner'], [' OWNER'], ['OWNER ']] },
    );
  });

  it('refuses a name with a control character or an unpaired surrogate inside with 422', () => {
    const unprintable = fc.oneof(
      fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    );
    fc.assert(
      fc.property(fc.record({ name, slug }), unprintable, fc.nat(), ({ name: n, slug: s }, bad, at) => {
        // Inside the name, so that trimming cannot remove it.
        const i = 1 + (at % n.normal.length);
        const raw = `x${n.normal.slice(0, i)}${bad}${n.normal.slice(i)}x`;
        const error = refusal(TeamBody, { name: raw, slug: s });
        expect(error.code).toBe('validation_failed');
        expect(Object.keys(error.fields ?? {})).toEqual(['name']);
      }),
      RUNS,
    );
  });

  it('refuses a name with a hidden character inside, or made only of them, with 422', () => {
    const hidden = fc.constantFrom(
      ...'\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u3164\u115f\u034f',
      '\u{e0041}',
    );
    fc.assert(
      fc.property(fc.record({ name, slug }), hidden, fc.nat(), ({ name: n, slug: s }, bad, at) => {
        const i = 1 + (at % n.normal.length);
        for (const raw of [`x${n.normal.slice(0, i)}${bad}${n.normal.slice(i)}x`, bad, `${bad}\u200d${bad}`]) {
          const error = refusal(TeamBody, { name: raw, slug: s });
          expect(Object.keys(error.fields ?? {})).toEqual(['name']);
        }
      }),
      RUNS,
    );
    // A joiner or a selector on its own, at an end or beside a space.
    for (const raw of ['\u200d', '\u200c', '\ufe0f', 'Ann\u200d', '\u200dAnn', 'Ann \u200dLee', '\ufe0fAnn', 'Ann \ufe0f']) {
      expect(Object.keys(refusal(TeamBody, { name: raw, slug: 'ab' }).fields ?? {}), JSON.stringify(raw)).toEqual(['name']);
    }
  });

  it('takes joiners between visible characters and selectors after one: emoji sequences, Persian and Indic spellings', () => {
    for (const raw of [
      '\u{1F469}\u200D\u{1F4BB} Devs',
      '\u2764\uFE0F\u200D\u{1F525}',
      '\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645',
      '\u845B\u{E0100}',
    ]) {
      expect(validate(TeamBody, { name: raw, slug: 'ab' })).toEqual({ name: raw, slug: 'ab' });
    }
  });

  it('refuses an address with a non-ASCII character, before lowercasing (U+212A KELVIN SIGN would become k)', () => {
    for (const email of ['\u212Aim@example.com', 'kim@example.\u212Aom', 'k\u0130m@example.com', 'kim@ex\u017Fample.com']) {
      for (const schema of [InviteBody, SignInBody]) {
        const error = refusal(schema, { email, role: 'MEMBER', password: 'x' });
        expect(Object.keys(error.fields ?? {})).toEqual(['email']);
      }
    }
  });

  it('refuses text without an @ as an e-mail with 422', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }).filter((s) => !s.includes('@')),
        (s) => {
          const error = refusal(InviteBody, { email: s, role: 'MEMBER' });
          expect(error.code).toBe('validation_failed');
          expect(error.fields).toHaveProperty(['email']);
        },
      ),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The real handler of POST /api/teams, driven with synthetic API Gateway events.

type Handler = (
  event: ReturnType<typeof toApiGatewayEvent>,
  context: ReturnType<typeof lambdaContext>,
) => Promise<{ statusCode?: number; body?: string }>;

/** Calls a handler as API Gateway and Lambda would, with the raw body and headers given. */
const invoke = async (fn: Handler, route: string, body: Buffer, headers: [string, string][]) => {
  const [method, path] = route.split(' ') as [string, string];
  const event = toApiGatewayEvent({ method, url: path, headers, body, sourceIp: '127.0.0.1', host: 'localhost' }, route);
  const result = await fn(event, lambdaContext('roster-test', FUNCTION_DEFAULTS.timeoutSeconds * 1000, event.requestContext.requestId));
  const status = result.statusCode ?? 200;
  const parsed: unknown = JSON.parse(result.body ?? '');
  return { status, parsed };
};

// Middy types the context with the endpoint's own state; at runtime it is a plain Lambda context.
const createTeam = createTeamHandler as unknown as Handler;
const signUp = signUpHandler as unknown as Handler;

/** Content types a client sends, and whether the contract counts each as JSON. */
const KNOWN_TYPES: [string, boolean][] = [
  ['application/json', true],
  ['application/json; charset=utf-8', true],
  ['APPLICATION/JSON', true],
  ['application/vnd.api+json', true],
  ['application/merge-patch+json', true],
  ['text/plain', false],
  ['text/json', false],
  ['application/x-www-form-urlencoded', false],
  ['multipart/form-data; boundary=x', false],
  ['application/jsonp', false],
  ['application/xml', false],
  ['application/octet-stream', false],
];

/** The Content-Type header, if any, and whether it is JSON (undefined: an arbitrary string, either way). */
const contentType = fc.oneof(
  fc.constant({ header: undefined, json: true as boolean | undefined }),
  fc.constantFrom(...KNOWN_TYPES).map(([header, json]) => ({ header, json: json as boolean | undefined })),
  fc.string({ maxLength: 30 }).map((header) => ({ header, json: undefined as boolean | undefined })),
);

/** Bodies of every shape: text, JSON values, JSON objects near the schema, and some just past 64 KiB. */
const rawBody = fc.oneof(
  { weight: 3, arbitrary: fc.string() },
  { weight: 3, arbitrary: fc.json() },
  {
    weight: 3,
    arbitrary: fc
      .record({ name: fc.oneof(fc.string(), nonString), slug: fc.oneof(slug, fc.string(), nonString) }, { requiredKeys: [] })
      .map((o) => JSON.stringify(o)),
  },
  // Valid bodies, some reusing a slug from a small pool so that 409 slug_taken comes up too.
  {
    weight: 3,
    arbitrary: fc
      .record({ name: name.map((n) => n.raw), slug: fc.oneof(slug, fc.constantFrom('fc-pool-1', 'fc-pool-2')) })
      .map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 1, arbitrary: fc.integer({ min: 65_520, max: 65_560 }).map((n) => JSON.stringify({ name: 'x'.repeat(n), slug: 'big' })) },
);

const headersFor = (type: string | undefined, extra: [string, string][] = []): [string, string][] => [
  ...(type === undefined ? [] : ([['Content-Type', type]] as [string, string][])),
  ...extra,
];

const MAX_BODY = 64 * 1024;

describe('POST /api/teams handler with arbitrary raw bodies', () => {
  it('answers anonymous callers 401 once the body passes the 413/415 gate, and never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        rawBody,
        contentType,
        fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
        async (text, type, authorization) => {
          const body = Buffer.from(text, 'utf8');
          const headers = headersFor(type.header, authorization === undefined ? [] : [['Authorization', authorization]]);
          const { status, parsed } = await invoke(createTeam, 'POST /api/teams', body, headers);
          expect(status).toBeLessThan(500);
          expect([400, 401, 413, 415, 422]).toContain(status);
          expect(parsed).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });

          const tooLarge = body.length > MAX_BODY;
          if (tooLarge && type.json !== false) expect(status).toBe(413);
          else if (tooLarge) expect([413, 415]).toContain(status);
          else if (type.json === false) expect(status).toBe(415);
          else if (type.json === true) expect(status).toBe(401);
          else expect([401, 415]).toContain(status);
        },
      ),
      RUNS,
    );
  });

  describe('with a valid access token', () => {
    let token = '';
    beforeAll(async () => {
      const body = Buffer.from(
        JSON.stringify({
          email: `fc-${randomUUID()}@example.com`,
          password: 'correct horse battery staple',
          firstName: 'F',
          lastName: 'C',
        }),
      );
      const { status, parsed } = await invoke(signUp, 'POST /api/auth/signup', body, [['content-type', 'application/json']]);
      expect(status).toBe(201);
      token = (parsed as { data: { session: { access_token: string } } }).data.session.access_token;
    });

    it('answers 201, 400, 409, 413 or 422 exactly as the body deserves, never 5xx', async () => {
      const json = fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8');
      // Slugs this property has created: a second create of one must get 409 slug_taken.
      const taken = new Set<string>();
      await fc.assert(
        fc.asyncProperty(rawBody, json, async (text, type) => {
          const body = Buffer.from(text, 'utf8');
          const { status, parsed } = await invoke(
            createTeam,
            'POST /api/teams',
            body,
            headersFor(type, [['Authorization', `Bearer ${token}`]]),
          );
          // The handler sees the bytes, so judge what they decode to (lone surrogates become U+FFFD).
          const expected = expectedWithToken(body.toString('utf8'), taken);
          expect(status, JSON.stringify(parsed)).toBe(expected);
          if (status === 201) taken.add((parsed as { data: { slug: string } }).data.slug);
        }),
        RUNS,
      );
    });
  });
});

/** What POST /api/teams must answer a signed-in caller for the body `text`, given the slugs already taken. */
const expectedWithToken = (text: string, taken: ReadonlySet<string>): number => {
  if (Buffer.byteLength(text, 'utf8') > MAX_BODY) return 413;
  if (text.trim() === '') return 422; // an empty body counts as {}: every field is missing
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 400;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 400;
  const { name: n, slug: s } = value as Record<string, unknown>;
  if ((n !== undefined && typeof n !== 'string') || (s !== undefined && typeof s !== 'string')) return 400;
  if (typeof n !== 'string' || typeof s !== 'string') return 422;
  const trimmed = n.trim();
  if (trimmed.length < 1 || trimmed.length > 100 || UNPRINTABLE.test(trimmed) || !SLUG_RULE.test(s)) return 422;
  return taken.has(s) ? 409 : 201;
};
