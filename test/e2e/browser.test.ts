import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type SpawnedGateway } from '../helpers.js';

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
