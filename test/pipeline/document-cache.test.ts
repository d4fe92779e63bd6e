import { GraphQLError, buildSchema, parse, specifiedRules, validate, type ValidationRule } from 'graphql';
import { envelop, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useDocumentCache } from '../../src/pipeline/document-cache.js';

const schema = buildSchema('type Query { hello: String, secret: String }');

/** Counts the documents it validates, so a test can see when validation really ran. */
function countingRule() {
  const seen = { count: 0 };
  const rule: ValidationRule = () => ({ Document: () => void seen.count++ });
  return { seen, rule };
}

/** Added instead of NoSecret for the other requests: both rule sets have the same length. */
const AnyField: ValidationRule = () => ({});

/** A rule added only for requests that ask for it: the rule set differs between requests. */
const NoSecret: ValidationRule = (ctx) => ({
  Field: (node) => {
    if (node.name.value === 'secret') ctx.reportError(new GraphQLError('no secret'));
  },
});

function setup(options: Parameters<typeof useDocumentCache>[0] = {}) {
  const cache = useDocumentCache(options);
  const { seen, rule } = countingRule();
  let parses = 0;
  const plugins: Plugin[] = [
    // What Yoga's useEngine does: the parser, and the specified rules added one by one.
    {
      onEnveloped: ({ setSchema }) => setSchema(schema),
      onParse: ({ setParseFn }) => setParseFn((...a: Parameters<typeof parse>) => (parses++, parse(...a))),
      onValidate: ({ setValidationFn, addValidationRule }) => {
        setValidationFn(validate);
        specifiedRules.forEach(addValidationRule);
      },
    },
    { onValidate: ({ addValidationRule }) => addValidationRule(rule) },
    // As GraphQL Armor does: a new rule function for every request, with the same name.
    {
      onValidate: ({ addValidationRule }) =>
        addValidationRule(function FreshEachTime() {
          return {};
        }),
    },
    { onValidate: ({ addValidationRule, context }) => addValidationRule((context as { strict?: boolean }).strict ? NoSecret : AnyField) },
    cache,
  ];
  const getEnveloped = envelop({ plugins });
  const run = (source: string, strict = false) => {
    const e = getEnveloped({ strict });
    const document = e.parse(source);
    return { document, errors: e.validate(e.schema, document) };
  };
  return { run, seen, parses: () => parses, cache };
}

describe('useDocumentCache', () => {
  it('parses and validates a document once for the same rules', () => {
    const { run, seen, parses } = setup();
    const first = run('{ hello }');
    const second = run('{ hello }');
    expect(second.document).toBe(first.document);
    expect(parses()).toBe(1);
    expect(seen.count).toBe(1);
    expect(second.errors).toEqual([]);
  });

  it('validates again when the rule set changes, and keeps each set apart', () => {
    const { run, seen } = setup();
    expect(run('{ secret }').errors).toEqual([]);
    expect(run('{ secret }', true).errors.map((e: { message: string }) => e.message)).toEqual(['no secret']);
    expect(seen.count).toBe(2);
    expect(run('{ secret }').errors).toEqual([]);
    expect(run('{ secret }', true).errors.map((e: { message: string }) => e.message)).toEqual(['no secret']);
    expect(seen.count).toBe(2);
  });

  it('keeps a refused document that holds no value; one with a value, and a syntax error, it parses again', () => {
    const { run, seen, parses } = setup();
    expect(run('{ nope }').errors[0]?.message).toContain('Cannot query field "nope"');
    expect(run('{ nope }').errors[0]?.message).toContain('Cannot query field "nope"');
    expect(seen.count).toBe(1);
    expect(parses()).toBe(1);
    // A value written under a name the schema does not know is typed nowhere: it may be a secret.
    run('{ nope(clave: "s3cr3t") }');
    run('{ nope(clave: "s3cr3t") }');
    expect(parses()).toBe(3);
    for (let i = 0; i < 2; i++) expect(() => run('{ hello')).toThrow();
    expect(parses()).toBe(5);
  });

  it('keeps a good document only once it has validated', () => {
    const { run, cache } = setup();
    run('{ hello }');
    expect(cache.knows('{ hello }')).toBe(true);
    expect(cache.knows('{ hello')).toBe(false);
  });
});

describe('useDocumentCache bounds', () => {
  /** A valid document of about `chars` characters (a comment keeps it under any token limit). */
  const big = (i: number, chars: number) => `# ${String(i).padEnd(chars, 'x')}\n{ hello }`;

  it('keeps parsed documents up to their weight in bytes, however many are sent', () => {
    const { run, cache } = setup({ maxBytes: 1_000_000 });
    for (let i = 0; i < 64; i++) run(big(i, 98_000));
    expect(cache.stats().bytes).toBeLessThanOrEqual(1_000_000);
    expect(cache.stats().bytes).toBeGreaterThan(800_000);
  });

  it('weighs a document by what it holds in memory, not by its text: deep and wide documents of few characters count for their tokens', () => {
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const { run, cache } = setup({ maxBytes: 20 * 1024 * 1024 });
    // 11 KB each, nearly 3,000 tokens: about a megabyte each once parsed, and valid.
    for (let i = 0; i < 200; i++) run(`# ${i}\n{ __schema { types { ${'ofType { '.repeat(990)} name ${'} '.repeat(990)} } } }`);
    global.gc?.();
    const held = process.memoryUsage().heapUsed - before;
    expect(cache.stats().bytes).toBeLessThanOrEqual(20 * 1024 * 1024);
    // What is counted is what is held, within a factor: never a tenth of it, as characters were.
    if (global.gc) expect(held).toBeLessThan(1.5 * cache.stats().bytes + 5 * 1024 * 1024);
  });

  it('keeps refused documents apart, so that they never crowd out good ones', () => {
    const { run, cache, parses } = setup({ maxBytes: 100_000, maxRefusedBytes: 100_000 });
    run('{ hello }');
    for (let i = 0; i < 200; i++) run(`# ${i}\n{ nope${i} }`);
    for (let i = 0; i < 200; i++) {
      try {
        run(`{ hello${i}`);
      } catch {
        // a syntax error, as expected
      }
    }
    const before = parses();
    run('{ hello }');
    expect(parses()).toBe(before);
    expect(cache.stats().refusedBytes).toBeLessThanOrEqual(100_000);
  });
});
