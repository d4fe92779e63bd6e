import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * podman as this machine and CI run it: `containers.conf` beside this file (runc, no default
 * ulimits), and the registry reached through this machine's npm configuration, passed to the
 * build as secrets (docs/deploy.md).
 */
export const PODMAN_ENV = { ...process.env, CONTAINERS_CONF: resolve('test/image/containers.conf') };

/** The name deploy/compose/compose.yaml runs, built from the Dockerfile by the tests. */
export const IMAGE = 'localhost/registro-gateway:latest';

/** Runs `command` to its end; rejects with its output when it fails or outlasts `timeoutMs`. */
export function run(command: string, args: readonly string[], timeoutMs = 60_000, env: NodeJS.ProcessEnv = PODMAN_ENV): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(command, args, { env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new Error(
            missing
              ? `${command} is not installed: apt-get install podman podman-compose debootstrap runc (.ci/run does)`
              : `${command} ${args.join(' ')} failed (${error.message.split('\n')[0]}):\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`,
          ),
        );
      } else resolvePromise(stdout);
    });
  });
}

export const podman = (args: readonly string[], timeoutMs?: number) => run('podman', args, timeoutMs);

/** `--secret` arguments for this machine's npmrc and the CA bundle its npm trusts, where they exist. */
export function npmSecrets(): string[] {
  const npmrc = join(homedir(), '.npmrc');
  const cafile = execFileSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' }).trim();
  return [
    ...(existsSync(npmrc) ? ['--secret', `id=npmrc,src=${npmrc}`] : []),
    ...(cafile !== 'null' && existsSync(cafile) ? ['--secret', `id=npm-ca,src=${cafile}`] : []),
  ];
}

/** Makes the stand-in base images when missing, then builds the gateway's image from the Dockerfile. */
export async function buildImage(): Promise<void> {
  await run('scripts/stand-in-images.sh', [], 10 * 60_000);
  await podman(['build', '--format', 'docker', ...npmSecrets(), '-t', IMAGE, '.'], 15 * 60_000);
}

/** Polls `url` until it answers `status`; rejects after `withinMs`. */
export async function until(url: string, status: number, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      last = `${res.status} ${await res.text()}`;
      if (res.status === status) return;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer ${status} within ${withinMs} ms; last: ${last}`);
}
