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

/**
 * The gateway's image as the tests build it from the Dockerfile: a tag of this run's, so that a
 * developer's own `localhost/registro-gateway:latest` is never replaced; removed after the tests.
 */
export const IMAGE = `localhost/registro-gateway:test-${process.pid}`;

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

/** The base images the build and compose use: the real ones where they can be pulled, else local stand-ins. */
export interface Bases {
  NODE_IMAGE: string;
  REDIS_IMAGE: string;
  /** Stand-ins made for this run, removed with the gateway's image. */
  STAND_INS: string;
}

/** The base images (scripts/stand-in-images.sh), then the gateway's image from the Dockerfile on them. */
export async function buildImage(): Promise<Bases> {
  const said = await run('scripts/stand-in-images.sh', [], 10 * 60_000);
  const bases = Object.fromEntries(
    said
      .trim()
      .split('\n')
      .map((line) => line.split('=', 2) as [string, string]),
  ) as unknown as Bases;
  // No intermediate images kept (--layers=false): nothing of the build outlives the test run.
  await podman(
    ['build', '--format', 'docker', '--layers=false', '--build-arg', `NODE_IMAGE=${bases.NODE_IMAGE}`, ...npmSecrets(), '-t', IMAGE, '.'],
    15 * 60_000,
  );
  return bases;
}

/** Removes every image the run made: the gateway's and the stand-ins (real base images pulled are kept). */
export async function removeImages(bases: Bases | undefined): Promise<void> {
  const made = [IMAGE, ...(bases?.STAND_INS.split(' ').filter(Boolean) ?? [])];
  await podman(['rmi', '--force', '--ignore', ...made]);
  const left = (await podman(['images', '--format', '{{.Repository}}:{{.Tag}}'])).split('\n').filter((name) => made.includes(name));
  if (left.length) throw new Error(`images the tests made are still there: ${left.join(', ')}`);
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
