import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Sealed } from './job-store.js';

/**
 * The keys of background validations: one seals a job's credentials (AES-256-GCM, bound to the
 * job's id), one names a token's owner without keeping the token. Derived (HKDF) from
 * CACHE_KEY_SECRET, which a fleet shares; without it, from a random key kept with the jobs.
 */
export class JobKeys {
  private constructor(
    readonly sealing: Buffer,
    readonly naming: Buffer,
  ) {}

  static of(root: string | Buffer): JobKeys {
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', root, 'validacion-masiva', info, 32));
    return new JobKeys(derive('credentials'), derive('owner'));
  }

  /** The owner a bearer token is, without the token. */
  ownerOfToken(token: string): string {
    return `t.${createHmac('sha256', this.naming).update(token).digest('base64url')}`;
  }

  seal(id: string, clientSecret: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealing, iv).setAAD(Buffer.from(id));
    const data = Buffer.concat([cipher.update(clientSecret, 'utf8'), cipher.final()]);
    return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
  }

  /** The secret sealed for job `id`; throws when the key or the job is another. */
  open(id: string, sealed: Sealed): string {
    const decipher = createDecipheriv('aes-256-gcm', this.sealing, Buffer.from(sealed.iv, 'base64'))
      .setAAD(Buffer.from(id))
      .setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
  }
}
