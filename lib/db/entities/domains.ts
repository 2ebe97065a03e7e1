import { Entity, type EntityConfiguration } from 'electrodb';
import { INDEXES, KEYS } from './table.ts';

const idPadding = { length: 16, char: '0' } as const;

/** What a team's verified domain lets people at it do (docs/domains.md). */
export const DOMAIN_JOIN = ['off', 'member', 'request'] as const;
export type DomainJoin = (typeof DOMAIN_JOIN)[number];

/**
 * A domain a team claims (docs/domains.md), in the team's partition (the team's cleanup takes it
 * with the rest). PENDING until the DNS TXT record it names is found; VERIFIED while it is;
 * LAPSED when a re-check no longer finds it (its effects stop; nobody is removed). Any number of
 * teams may claim one domain: only one can verify it (its `domainOwner` item).
 */
export const teamDomain = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'teamDomain', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        domain: { type: 'string', required: true, readOnly: true },
        /** The public id (audit entries and webhooks name it). */
        domainId: { type: 'number', required: true, readOnly: true },
        status: { type: ['PENDING', 'VERIFIED', 'LAPSED'] as const, required: true },
        /** The TXT record's value is `roster-domain-verification=<token>`: random, per team and domain. */
        token: { type: 'string', required: true, readOnly: true },
        join: { type: DOMAIN_JOIN, required: true },
        createdByUserId: { type: 'number', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
        updatedAt: { type: 'string', required: true },
        verifiedAt: { type: 'string' },
        /** The last DNS check, and what it found wrong when it failed. */
        checkedAt: { type: 'string' },
        lastProblem: { type: 'string' },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: ['domain'] } },
      },
    },
    config,
  );

/**
 * The one team a domain is verified for: created by the verification (conditional: one domain,
 * one team), deleted when the domain is removed, lapses, or its team is deleted. What a sign-up,
 * a join or a sign-in looks up by an address's domain. `checkAfter` orders the re-checks (gsi3).
 */
export const domainOwner = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'domainOwner', version: '1', service: 'roster' },
      attributes: {
        domain: { type: 'string', required: true, readOnly: true },
        teamId: { type: 'number', required: true, readOnly: true },
        verifiedAt: { type: 'string', required: true, readOnly: true },
        /** ISO 8601: when the scheduled re-check looks at it next. */
        checkAfter: { type: 'string', required: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['domain'] }, sk: { field: KEYS.sk, composite: [] } },
        /** Every verified domain by its next check: one partition, as verified domains are few (one per company). */
        byCheck: {
          index: 'gsi3',
          pk: { field: INDEXES.gsi3.pk, composite: [] },
          sk: { field: INDEXES.gsi3.sk, composite: ['checkAfter'] },
        },
      },
    },
    config,
  );

/**
 * A person at a team's verified domain asking to join it (the domain's `join: request`), in the
 * team's partition under its own label: one per person and team, until an owner or admin answers.
 */
export const joinRequest = (config?: EntityConfiguration) =>
  new Entity(
    {
      model: { entity: 'joinRequest', version: '1', service: 'roster' },
      attributes: {
        teamId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        userId: { type: 'number', required: true, readOnly: true, padding: idPadding },
        userUuid: { type: 'string', required: true, readOnly: true },
        email: { type: 'string', required: true, readOnly: true },
        domain: { type: 'string', required: true, readOnly: true },
        createdAt: { type: 'string', required: true, readOnly: true },
      },
      indexes: {
        primary: { pk: { field: KEYS.pk, composite: ['teamId'] }, sk: { field: KEYS.sk, composite: ['userId'] } },
      },
    },
    config,
  );
