import type { Logger } from '@aws-lambda-powertools/logger';
import { exchangeOf, type HttpRequest } from './exchange';

/**
 * The powertools loggers carry the Lambda context (function, request id, cold start) and the
 * request's correlation id on every line written while the request runs.
 */
export function loggerContext(loggers: Logger[]) {
  const clear = () => {
    for (const l of loggers) l.removeKeys(['correlationId']);
  };
  return {
    name: 'loggerContext',
    before: (request: HttpRequest) => {
      const { correlationId } = exchangeOf(request);
      for (const l of loggers) {
        if (request.context?.functionName) l.addContext(request.context);
        l.appendKeys({ correlationId });
      }
    },
    after: clear,
    onError: clear,
  };
}
