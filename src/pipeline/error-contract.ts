import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import { errorBody, maskError, resultWithContract, worded, type Worded } from '../errors.js';
import { GRAPHQL_PATH } from '../config.js';

/** The error contract on Yoga's side: every result's errors typed, and Yoga's empty refusals given a typed body. */

/**
 * One part of an incremental answer, its errors and those of each `incremental` entry masked
 * as Yoga masks a single result's (Yoga does not reach into the parts), then typed.
 */
function partWithContract<P>(part: P): P {
  const mask = <E extends { errors?: readonly unknown[] }>(entry: E): E =>
    entry.errors?.length
      ? { ...entry, errors: entry.errors.map((e) => (e instanceof GraphQLError ? maskError(e, 'Unexpected error.') : e)) }
      : entry;
  const fixed = resultWithContract(mask(part as P & { errors?: readonly unknown[] })) as P & {
    incremental?: readonly { errors?: readonly unknown[] }[];
  };
  return fixed.incremental ? { ...fixed, incremental: fixed.incremental.map((entry) => resultWithContract(mask(entry))) } : fixed;
}

/** Yoga plugin: the last look at every result, so no error leaves without `code` and `retryable`; each part of a stream too. */
export function useErrorContract(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      setResult(isAsyncIterable(result) ? mapAsyncIterator(result, partWithContract) : resultWithContract(result));
    },
  };
}

/** What Yoga answers with an empty body (415 for a content type it cannot read, 404 off /graphql), typed. */
const EMPTY_REFUSALS: Record<number, Worded> = {
  404: worded('routeNotFound', { path: GRAPHQL_PATH }),
  415: worded('unsupportedContentType'),
};

/** Yoga plugin: a refusal Yoga sends with no body gets the typed body every other error has. */
export function useTypedRefusals(): Plugin {
  return {
    onResponse({ response, setResponse, fetchAPI }) {
      const refusal = EMPTY_REFUSALS[response.status];
      if (!refusal || response.headers.has('content-type')) return;
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      headers.delete('content-length');
      setResponse(new fetchAPI.Response(errorBody(refusal), { status: response.status, headers }));
    },
  };
}
