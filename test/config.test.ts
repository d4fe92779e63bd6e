import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 4000,
      host: '0.0.0.0',
      upstreamUrl: undefined,
      upstreamTimeoutMs: 10_000,
      upstreamBatchTimeoutMs: 60_000,
      upstreamConcurrency: 8,
      upstreamConnections: 1024,
      upstreamTokenShare: 256,
      upstreamFallbackUrl: undefined,
      upstreamRetries: 2,
      upstreamDeadlineMs: 15_000,
      breaker: { failurePercent: 50, minCalls: 20, windowMs: 10_000, cooldownMs: 10_000 },
      limits: {
        maxDepth: 6,
        maxAliases: 20,
        maxTokens: 3000,
        maxDirectives: 10,
        maxOperationCost: 100,
      },
      http: { maxBodyBytes: 102_400, maxConcurrent: 2048, headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000 },
      corsOrigins: '*',
      cache: {
        enabled: true,
        coalesce: true,
        leaseMs: 16_000,
        ttlMs: { ruc: 6 * 3600_000, rucSunat: 6 * 3600_000, licencia: 24 * 3600_000 },
        notFoundTtlMs: 600_000,
        maxEntries: 10_000,
        maxBytes: 50 * 1024 * 1024,
        redisUrl: undefined,
        keySecret: undefined,
      },
      httpFastPath: true,
      otelEndpoint: undefined,
      workers: availableParallelism(),
      shutdownTimeoutMs: 10_000,
      logLevel: 'info',
      nodeEnv: undefined,
    });
  });

  it('is frozen', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true);
  });

  it('treats blank variables as unset', () => {
    expect(loadConfig({ UPSTREAM_URL: '', PORT: ' ' }).port).toBe(4000);
  });

  it('names every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', UPSTREAM_TIMEOUT_MS: '-1', UPSTREAM_URL: 'ftp://x' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'x', UPSTREAM_TIMEOUT_MS: '-1', UPSTREAM_URL: 'ftp://x' });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('PORT');
      expect(message).toContain('UPSTREAM_TIMEOUT_MS');
      expect(message).toContain('UPSTREAM_URL');
    }
  });

  it('refuses production without UPSTREAM_URL and accepts it with one', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/NODE_ENV=production requires UPSTREAM_URL/);
    expect(loadConfig({ NODE_ENV: 'production', UPSTREAM_URL: 'https://api.apiperu.dev' }).upstreamUrl).toBe('https://api.apiperu.dev');
  });
});

describe('npm start in production without UPSTREAM_URL', () => {
  it('exits 1 with a clear message and never listens', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env['PATH'], NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(output).toContain('NODE_ENV=production requires UPSTREAM_URL');
    expect(output).not.toContain('gateway ready');
    expect(output).not.toContain('SANDBOX');
  });
});
