/**
 * A UUIDv7 (RFC 9562) begins with the Unix milliseconds of its making, 48 bits in 12 hex digits,
 * so the lowercase text of such ids sorts by time: the audit log's sort key. This bounds a stretch
 * of time in a range of them.
 */

/** The 13 characters every UUIDv7 made in `at`'s millisecond begins with: below all of them, above all earlier ones. */
export const uuidV7Floor = (at: Date): string => {
  const hex = at.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}`;
};
