import { readFileSync } from 'node:fs';
import { assertEnumType, buildSchema, isEnumType, isInputObjectType, isObjectType, type GraphQLNamedType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { schema } from '../../src/schema/index.js';
import { printedSchema, printedSubgraph } from '../../src/schema/print.js';

const contract = buildSchema(readFileSync(new URL('../contract.graphql', import.meta.url), 'utf8'));

function fieldsOf(type: GraphQLNamedType | undefined | null) {
  if (!type || !(isObjectType(type) || isInputObjectType(type))) return undefined;
  const fields: Record<string, { type: string; args?: Record<string, string> }> = {};
  if (isObjectType(type)) {
    for (const f of Object.values(type.getFields())) {
      fields[f.name] = { type: String(f.type), args: Object.fromEntries(f.args.map((a) => [a.name, String(a.type)])) };
    }
  } else {
    for (const f of Object.values(type.getFields())) fields[f.name] = { type: String(f.type) };
  }
  return fields;
}

describe('schema.graphql', () => {
  it('is the printed SDL of the code (run `npm run schema:print` when this fails)', () => {
    expect(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8')).toBe(printedSchema());
  });

  it('subgraph.graphql is the subgraph SDL of the code (run `npm run schema:print` when this fails)', () => {
    expect(readFileSync(new URL('../../subgraph.graphql', import.meta.url), 'utf8')).toBe(printedSubgraph());
  });
});

describe('the contract (shared/design/contract.md)', () => {
  for (const type of Object.values(contract.getTypeMap()).filter((t) => !t.name.startsWith('__'))) {
    if (['String', 'Boolean', 'Int', 'Float', 'ID'].includes(type.name)) continue;
    if (isEnumType(type)) {
      it(`${type.name} has exactly the contract's values`, () => {
        const values = (t: GraphQLNamedType | null | undefined) =>
          t && isEnumType(t)
            ? t
                .getValues()
                .map((v) => v.name)
                .sort()
            : undefined;
        expect(values(schema.getType(type.name))).toEqual(values(type));
      });
      continue;
    }
    it(`${type.name} has exactly the contract's fields, arguments and types (more fields allowed)`, () => {
      const ours = fieldsOf(schema.getType(type.name));
      expect(ours, `type ${type.name} is missing`).toBeDefined();
      for (const [name, field] of Object.entries(fieldsOf(type)!)) {
        expect(ours![name], `${type.name}.${name}`).toEqual(field);
      }
    });
  }

  it('prints the ErrorCode enum with every code the gateway emits', () => {
    const values = assertEnumType(schema.getType('ErrorCode'))
      .getValues()
      .map((v) => v.name);
    expect(values.sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const code of [
      'INVALID_INPUT',
      'DOCUMENT_NOT_FOUND',
      'QUOTA_EXCEEDED',
      'UNAUTHENTICATED',
      'FORBIDDEN',
      'UPSTREAM_UNAVAILABLE',
      'UPSTREAM_ERROR',
      'INTERNAL_SERVER_ERROR',
    ]) {
      expect(values).toContain(code);
    }
  });

  it('names the REST operation and the plan cost in every root field description', () => {
    for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
      // Federation's `_service` reaches nothing; `_entities` says what each reference costs; the search and the changes read the register
      // alone, the subscriptions are the gateway's own, and SUNAT's free services are SUNAT's.
      const own = [
        'buscarContribuyentes',
        'cambiosPadron',
        'suscripciones',
        'cambiarSuscripcion',
        'eliminarSuscripcion',
        'tiposDeCambio',
        'validacionMasiva',
        'validacionesMasivas',
        'crearValidacionMasiva',
        'cancelarValidacionMasiva',
      ];
      for (const field of Object.values(root.getFields()).filter((f) => f.name !== '_service')) {
        if (!own.includes(field.name)) expect(field.description, field.name).toMatch(/REST: POST \/[a-z-]+/);
        expect(field.description, field.name).toMatch(/Costo: /);
      }
    }
  });
});
