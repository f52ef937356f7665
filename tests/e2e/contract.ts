import type { BrowserContext } from 'playwright-core';
import type { App } from '../support/contract';
import { recordAnswer } from '../support/contract-recorder';

// The browser's API traffic in the contract record (issue 30): every answer a page of the context
// receives from the application's API (/api, /health, /openapi on its own origin) is validated
// like the clients' (tests/support/contract-recorder.ts). An answer whose body the browser no
// longer holds (the context closed first) is left out.
const API = /^\/(api|health|openapi)(\/|$)/;

export function recordBrowserAnswers(context: BrowserContext, app: App, origin: string): void {
  context.on('response', (response) => {
    const url = new URL(response.url());
    if (url.origin !== new URL(origin).origin || !API.test(url.pathname)) return;
    void (async () => {
      let body: string;
      let headers: Record<string, string>;
      try {
        [body, headers] = await Promise.all([response.body().then((b) => b.toString('utf8')), response.allHeaders()]);
      } catch {
        return;
      }
      recordAnswer(app, { method: response.request().method(), url: url.pathname + url.search, status: response.status(), headers, body });
    })();
  });
}
