import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EjemploDocument } from '../../operations/generated/graphql.js';
import { post, spawnGateway, type SpawnedGateway } from '../helpers.js';

/** `npm start` as a newcomer runs it: no configuration, so the built-in sandbox. */
let gateway: SpawnedGateway;
let child: SpawnedGateway['child'];
let output = '';
let url = '';

beforeAll(async () => {
  gateway = await spawnGateway();
  ({ child, url } = gateway);
  output = gateway.output();
});

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

describe('npm start without configuration', () => {
  it('says loudly that it serves sample data, and which sandbox tokens exist', () => {
    expect(output).toContain('SANDBOX');
    expect(output).toContain('SAMPLE DATA');
    expect(output).toContain('sandbox-pro');
    expect(output).toContain('sandbox-free');
  });

  it('serves GraphiQL with the sandbox token already in the headers pane', async () => {
    const html = await (await fetch(url, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain('Bearer sandbox-pro');
  });

  it('answers the example operation over the sandbox', async () => {
    const res = await post(url, { query: print(EjemploDocument), variables: { ruc: '20100123453', numLicencia: 'Q46779354' } });
    const body = (await res.json()) as { data: { contribuyente: { nombreORazonSocial: string }; licencia: { nombres: string } } };
    expect(body.data.contribuyente.nombreORazonSocial).toBe('COMERCIAL ANDINA S.A.C.');
    expect(body.data.licencia.nombres).toBe('ROSA ELENA');
  });

  it('stops cleanly on SIGTERM with exit code 0', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
