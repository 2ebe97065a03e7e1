import type { StaticAnswer } from '#lib/http/static.ts';
import { oneLine } from '#lib/mail/safety.ts';
import { html, renderPage } from './render.ts';

/** What an unsubscribe link stands for (lib/teams/invites/unsubscribe.ts). */
export interface UnsubscribeLink {
  email: string;
  /** Undefined when the team is gone. */
  teamName: string | undefined;
}

const TITLE = 'Stop invitations';

/** Any link that cannot be used: unknown, incomplete or expired. One page, whatever the reason. */
export const UNUSABLE = renderPage({
  title: TITLE,
  main: `      <p>This link cannot be used: it is incomplete or has expired. Open the whole link from the latest e-mail.</p>`,
});

const teamOf = (link: UnsubscribeLink): string => (link.teamName === undefined ? 'this team' : `“${oneLine(link.teamName)}”`);

/**
 * GET /unsubscribe?token=…: two buttons, each a plain form posting to the link itself (no script:
 * a mail scanner that follows the link changes nothing, a person's press does).
 */
export const unsubscribePage = (link: UnsubscribeLink): StaticAnswer =>
  renderPage({
    title: TITLE,
    main: `      <p>Roster sent invitations or ownership proposals from ${html(teamOf(link))} to <strong>${html(link.email)}</strong>. Choose what stops:</p>
      <form method="post">
        <input type="hidden" name="scope" value="team">
        <button type="submit">No more from ${html(teamOf(link))}</button>
      </form>
      <form method="post">
        <input type="hidden" name="scope" value="everyone">
        <button type="submit">No more from anyone on Roster</button>
      </form>
      <p>Sign-in, password and address e-mails you ask for yourself still come.</p>`,
  });

/** What a press (or a mail client's one-click POST) did. */
export const unsubscribedPage = (link: UnsubscribeLink, scope: 'team' | 'everyone'): StaticAnswer =>
  renderPage({
    title: 'Done',
    main: `      <p><strong>${html(link.email)}</strong> gets no more invitations or ownership proposals ${html(
      scope === 'team' ? `from ${teamOf(link)}` : 'from anyone on Roster',
    )}.</p>`,
  });
