import { config } from '#lib/core/config.ts';

/** The minimum length of a new password, as sign-up checks it (the browser checks it first). */
export const MIN_LENGTH = ` minlength="${config.passwordMinLength}"`;

/** A labelled input; `id` names it for the script and for its label. */
export const field = (id: string, label: string, type: string, autocomplete: string, extra = ''): string =>
  `<label for="${id}">${label}</label><input id="${id}" name="${id}" type="${type}" autocomplete="${autocomplete}" required${extra}>`;
