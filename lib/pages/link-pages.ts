import type { StaticAnswer } from '#lib/http/static.ts';
import { field, MIN_LENGTH } from './forms.ts';
import { renderPage } from './render.ts';

/**
 * The pages of the confirmation and reset links. They read nothing (the script posts the link's
 * token), so their functions carry no database client: their own module, apart from the invite page.
 */
const INCOMPLETE = (title: string): StaticAnswer =>
  renderPage({ title, main: '      <p>This link is incomplete: open the whole link from the e-mail, or ask for a new one.</p>' });

/** GET /verify?token=…: a button, so that a mail scanner following the link confirms nothing. */
export const verifyPage = (token: string | undefined): StaticAnswer =>
  token
    ? renderPage({
        title: 'Confirm your e-mail address',
        data: { page: 'verify' },
        main: `      <p>Press the button to confirm that this address is yours.</p>
      <button type="button" id="confirm">Confirm my address</button>`,
      })
    : INCOMPLETE('Confirm your e-mail address');

/** GET /reset?token=…: the new password, twice; the token is used only when the form is sent. */
export const resetPage = (token: string | undefined): StaticAnswer =>
  token
    ? renderPage({
        title: 'Choose a new password',
        data: { page: 'reset' },
        main: `      <form id="reset" method="post" novalidate>
        ${field('reset-password', 'New password', 'password', 'new-password', MIN_LENGTH)}
        ${field('reset-confirm', 'New password again', 'password', 'new-password', MIN_LENGTH)}
        <button type="submit">Set the new password</button>
      </form>`,
      })
    : INCOMPLETE('Choose a new password');
