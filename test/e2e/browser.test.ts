import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { spawnGateway, type SpawnedGateway } from '../helpers.js';
import { startIdentityProvider, type IdentityProvider } from '../idp.js';

/** Debian's Chromium (.ci/run installs it); playwright-core downloads nothing. */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = 'test-results/graphiql.png';

let gateway: SpawnedGateway;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install chromium (.ci/run does)`);
  // Exactly as `npm start` starts it: no configuration, so the built-in sandbox.
  gateway = await spawnGateway();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // As root, without a sandbox; and no background traffic to hosts this machine cannot reach.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (gateway && gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
});

describe('GraphiQL in a real browser', () => {
  it('loads, runs the example with the sandbox token in the headers pane, and shows the taxpayer', { timeout: 60_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const failed: string[] = [];
    page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`));
    await page.goto(gateway.url, { waitUntil: 'load' });

    const run = page.locator('.graphiql-execute-button');
    await run.waitFor({ state: 'visible', timeout: 30_000 });
    // Monaco writes spaces as no-break spaces.
    const text = async () => (await page.locator('body').innerText()).replace(/\u00a0/g, ' ');
    await page.waitForFunction(() => document.body.innerText.replace(/\u00a0/g, ' ').includes('query Ejemplo'), undefined, {
      timeout: 30_000,
    });

    await page.getByText('Headers', { exact: true }).click();
    await page.waitForFunction(() => document.body.innerText.replace(/\u00a0/g, ' ').includes('Bearer sandbox-pro'), undefined, {
      timeout: 10_000,
    });

    await run.click();
    await page.waitForFunction(() => document.body.innerText.replace(/\u00a0/g, ' ').includes('COMERCIAL ANDINA S.A.C.'), undefined, {
      timeout: 30_000,
    });
    expect(await text()).toContain('ROSA ELENA');
    // The deferred detailed record arrives in a later part, and GraphiQL shows it too.
    await page.waitForFunction(() => document.body.innerText.replace(/\u00a0/g, ' ').includes('SOCIEDAD ANONIMA CERRADA'), undefined, {
      timeout: 30_000,
    });

    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    // Everything it needed came from the gateway itself. GraphiQL's fetcher may cancel the
    // multipart answer once its last part (hasNext: false) is in, before the closing boundary:
    // Chromium counts that as an aborted request, after the detail has rendered (above).
    expect(failed.filter((f) => f !== `${new URL('/graphql', gateway.url).href} net::ERR_ABORTED`)).toEqual([]);
  });
});

describe('GraphiQL’s second tab: a search, with PADRON=sandbox', () => {
  let padron: SpawnedGateway | undefined;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'browser-padron-'));
    padron = await spawnGateway({ PADRON: 'sandbox', PADRON_DIR: dir });
    const health = padron.url.replace(/\/graphql$/, '/health');
    const deadline = Date.now() + 20_000;
    while (((await (await fetch(health)).json()) as { padron: { state: string } }).padron.state !== 'ready') {
      if (Date.now() > deadline) throw new Error('the sandbox register never got ready');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);
  afterAll(async () => {
    await padron?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens a second tab with the autocomplete a form sends, which finds the sandbox’s taxpayer by name', { timeout: 60_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(padron!.url, { waitUntil: 'load' });
    const tabs = page.locator('.graphiql-tab');
    await tabs.nth(1).waitFor({ state: 'visible', timeout: 30_000 });
    await tabs.nth(1).click();
    await page.waitForFunction(() => document.body.innerText.replace(/\u00a0/g, ' ').includes('query Autocompletar'), undefined, {
      timeout: 30_000,
    });
    await page.locator('.graphiql-execute-button').click();
    await page.waitForFunction(() => document.body.innerText.replace(/\u00a0/g, ' ').includes('COMERCIAL ANDINA S.A.C.'), undefined, {
      timeout: 30_000,
    });
    expect((await page.locator('body').innerText()).replace(/\u00a0/g, ' ')).toContain('"hasNextPage"');
  });
});

/** A frontend on another origin signs in with its identity provider and queries the gateway with urql. */
describe('a browser app in sign-in mode (urql, another origin, CORS preflight)', () => {
  let idp: IdentityProvider;
  let sandbox: Sandbox;
  let signedIn: SpawnedGateway | undefined;
  const PLAN = 'plan-token-browser-5e81';

  beforeAll(async () => {
    idp = await startIdentityProvider();
    const key = await idp.addKey('RS256');
    sandbox = await startSandbox({ tokens: [{ token: PLAN, plan: 'pro', quota: 1000 }] });
    signedIn = await spawnGateway({
      UPSTREAM_URL: sandbox.url,
      AUTH_JWKS_URL: idp.jwksUrl,
      AUTH_ISSUER: idp.issuer,
      AUTH_AUDIENCE: idp.audience,
      UPSTREAM_TOKEN: PLAN,
    });
    // The app's origin is the identity provider's server: its page, urql's modules, and its sign-in.
    for (const [path, file] of Object.entries(URQL_MODULES)) idp.serve(path, 'text/javascript', readFileSync(file, 'utf8'));
    idp.serve('/sign-in', 'application/json', JSON.stringify({ token: await idp.sign(key, 'browser-user') }));
    idp.serve('/app.html', 'text/html', appPage(new URL('/graphql', signedIn.url).href));
  }, 60_000);

  afterAll(async () => {
    await signedIn?.stop();
    await sandbox?.close();
    await idp?.close();
  });

  it(
    'signs in, sends the JWT in Authorization, and renders the taxpayer; the upstream got the plan token',
    { timeout: 60_000 },
    async () => {
      const page = await browser.newPage();
      const preflights: string[] = [];
      page.on('request', (r) => r.method() === 'OPTIONS' && preflights.push(r.url()));
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      await page.goto(`${idp.issuer}/app.html`, { waitUntil: 'load' });
      await page
        .waitForFunction(() => document.getElementById('anonymous')?.textContent !== '…', undefined, { timeout: 30_000 })
        .catch((error: Error) => {
          throw new Error(`${error.message}: ${problems.join('; ')}`);
        });
      expect(await page.locator('#out').textContent()).toBe('COMERCIAL ANDINA S.A.C.');
      expect(await page.locator('#anonymous').textContent()).toBe('UNAUTHENTICATED');
      // Another origin, and a header no simple request may carry: Chromium sent the query only
      // after a CORS preflight the gateway allowed (preflights are not shown to the page's events).
      expect(new URL(idp.issuer).origin).not.toBe(new URL(signedIn!.url).origin);
      expect(sandbox.callsTo('/ruc').map((c) => c.headers.authorization)).toEqual([`Bearer ${PLAN}`]);
    },
  );
});

/** urql's ES modules, as the app's import map names them. */
const URQL_MODULES: Record<string, string> = {
  '/m/urql-core.mjs': 'node_modules/@urql/core/dist/urql-core.mjs',
  '/m/urql-core-chunk.mjs': 'node_modules/@urql/core/dist/urql-core-chunk.mjs',
  '/m/wonka.mjs': 'node_modules/wonka/dist/wonka.mjs',
  '/m/graphql.web.mjs': 'node_modules/@0no-co/graphql.web/dist/graphql.web.mjs',
};

function appPage(endpoint: string): string {
  const imports = { '@urql/core': '/m/urql-core.mjs', wonka: '/m/wonka.mjs', '@0no-co/graphql.web': '/m/graphql.web.mjs' };
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify({ imports })}</script>
<script>/* what a bundler would replace in urql's modules */ window.process = { env: { NODE_ENV: 'production' } };</script></head>
<body><p id="out">…</p><p id="anonymous">…</p><script type="module">
import { Client, cacheExchange, fetchExchange } from '@urql/core';
const query = 'query Proveedor($ruc: String!) { contribuyente(ruc: $ruc) { ruc nombreORazonSocial } }';
const currentJwt = async () => (await (await fetch('/sign-in')).json()).token;
// As the README's snippets: each request carries the user's current sign-in token.
const signedIn = async (url, init) => fetch(url, { ...init, headers: { ...init?.headers, authorization: 'Bearer ' + (await currentJwt()) } });
const client = new Client({ url: ${JSON.stringify(endpoint)}, exchanges: [cacheExchange, fetchExchange], fetch: signedIn });
const result = await client.query(query, { ruc: '20100123453' }).toPromise();
document.getElementById('out').textContent = result.error ? 'ERROR ' + result.error.message : result.data.contribuyente.nombreORazonSocial;
const anonymous = new Client({ url: ${JSON.stringify(endpoint)}, exchanges: [fetchExchange], preferGetMethod: false });
const refused = await anonymous.query(query, { ruc: '20100123453' }).toPromise();
document.getElementById('anonymous').textContent = refused.error?.graphQLErrors?.[0]?.extensions?.code ?? 'NO ERROR';
</script></body></html>`;
}
