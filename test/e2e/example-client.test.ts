import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advice, execute } from '../../examples/client.js';
import { LicenciaDocument } from '../../operations/generated/graphql.js';
import { startStack, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describe('the typed client in examples/', () => {
  it('runs against the sandbox and prints typed results and narrowed errors', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/client.ts'], {
      env: { PATH: process.env['PATH'], GATEWAY_URL: `${stack.url}/graphql`, GATEWAY_TOKEN: 'sandbox-pro' },
      timeout: 30_000,
    });
    expect(stdout).toContain('contribuyente: COMERCIAL ANDINA S.A.C.');
    expect(stdout).toContain('licencia: ROSA ELENA QUISPE');
    expect(stdout).toContain('error INVALID_INPUT at contribuyente: fix the input: El RUC es incorrecto');
    expect(stdout).toContain('comprobante F001-1532: ACEPTADO');
    expect(stdout).toContain('titular: DNI 46779354');
    expect(stdout).toMatch(/cost: \{"estimated":5,"limit":100,"queries":5,"upstreamCalls":4,"cacheHits":0,"staleHits":0\}/);
  });

  it('narrows an error by its code', async () => {
    const result = await execute(`${stack.url}/graphql`, 'sandbox-free', LicenciaDocument, { numLicencia: 'Q46779354' });
    expect(result.data?.licencia).toBeNull();
    expect(result.errors.map((e) => e.extensions.code)).toEqual(['FORBIDDEN']);
    expect(advice(result.errors[0]!)).toBe('the plan does not allow this');
  });
});
