/**
 * `/login`: where a console protected by a token is signed in to. The token is sent once, in a
 * form; the answer is a session cookie (see `console-access.ts`). Also the page every request
 * without a valid session gets, with the reason, and status 401.
 */
import { html, type SafeHtml } from '../html.js';
import { notice, page } from '../layout.js';

/** The sign-in page; `csrf` is the anonymous visitor's form token, `message` why they are here. */
export function loginPage(csrf: string, message: string | undefined): SafeHtml {
  const body = html` <h1>Sign in</h1>
    ${message ? notice('error', message) : ''}
    <form method="post" action="/login" class="login">
      <input type="hidden" name="csrf" value="${csrf}" />
      <label
        >Console token <span class="hint">server.console.auth.token</span>
        <input type="password" name="token" required autocomplete="current-password" autofocus
      /></label>
      <div class="buttons"><button class="primary">Sign in</button></div>
    </form>`;
  return page({ title: 'Sign in', current: '', ctx: undefined, body });
}
