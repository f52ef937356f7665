import { consoleHandler } from '@lib/http/console';

// Catch-all: an unknown route answers 404 { code: not_found } like every other error.
export const routes = [];
export const handler = consoleHandler(routes);
