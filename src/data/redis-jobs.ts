import { randomBytes } from 'node:crypto';
import { categoryOf, NO_RESUMEN, type Job, type JobReceipt, type JobState, type JobStore, type Resumen } from '../sunat/job-store.js';
import type { RedisLink } from './redis.js';

/** Every key of the jobs in one hash slot (`{vm}`): a Redis Cluster runs the scripts below and BullMQ's alike. */
export const JOBS_PREFIX = '{vm}';
const jobKey = (id: string) => `${JOBS_PREFIX}:j:${id}`;
const stateKey = (id: string) => `${JOBS_PREFIX}:s:${id}`;
const ownerKey = (owner: string) => `${JOBS_PREFIX}:o:${owner}`;
const receiptsKey = (id: string) => `${JOBS_PREFIX}:r:${id}`;
const answersKey = (id: string) => `${JOBS_PREFIX}:a:${id}`;
const positionsKey = (id: string) => `${JOBS_PREFIX}:p:${id}`;
const ROOT_KEY = `${JOBS_PREFIX}:key`;
/** Receipts written by one RPUSH: a month of them is many commands, not one huge one. */
const PUSHED_AT_ONCE = 1000;
/** An unfinished job nobody ends (the fleet gone for good) still goes, this long after it was made. */
const UNFINISHED_KEPT_S = 90 * 86_400;

const STATES: readonly JobState[] = ['EN_COLA', 'EN_CURSO', 'TERMINADA', 'CANCELADA', 'FALLIDA'];
const FINISHED_LUA = "e == 'TERMINADA' or e == 'CANCELADA' or e == 'FALLIDA'";
/** KEYS: state. Queued → under way. */
const BEGIN = `local e = redis.call('HGET', KEYS[1], 'estado')
if e == 'EN_COLA' then redis.call('HSET', KEYS[1], 'estado', 'EN_CURSO') end
return 1`;
/** KEYS: state, then every key of the job; ARGV: estado, terminadaEn, motivo, seconds kept. Only an unfinished job ends. */
const END = `local e = redis.call('HGET', KEYS[1], 'estado')
if not e or ${FINISHED_LUA} then return 0 end
redis.call('HSET', KEYS[1], 'estado', ARGV[1], 'terminadaEn', ARGV[2], 'motivo', ARGV[3], 'sealed', '')
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[4]) end
return 1`;
/** KEYS: state, answers; ARGV: index, answer, weight, category. An answer is written and counted once, while the job runs. */
const ANSWER = `local e = redis.call('HGET', KEYS[1], 'estado')
if not e or ${FINISHED_LUA} then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'validados', ARGV[3])
redis.call('HINCRBY', KEYS[1], ARGV[4], ARGV[3])
return 1`;

type Fixed = Pick<Job, 'id' | 'owner' | 'total' | 'distinct' | 'creadaEn' | 'rucEmpresa' | 'clientId'>;

/**
 * A fleet's background validations in Redis: what never changes of a job as JSON, its state and
 * counts in a hash changed only by scripts (an answer counted once whoever writes it), its
 * receipts as a list, its answers as a hash, and its positions as bytes. A finished job's keys
 * expire after VALIDACION_MASIVA_DIAS.
 */
export class RedisJobStore implements JobStore {
  constructor(
    readonly link: RedisLink,
    readonly keptDays: number,
  ) {}

  async create(job: Job, receipts: readonly JobReceipt[], positions: Uint32Array): Promise<void> {
    const { id, owner, total, distinct, creadaEn, rucEmpresa, clientId } = job;
    const fixed: Fixed = { id, owner, total, distinct, creadaEn, rucEmpresa, clientId };
    const multi = this.link.redis
      .multi()
      .set(jobKey(id), JSON.stringify(fixed), 'EX', UNFINISHED_KEPT_S)
      .hset(stateKey(id), { ...stateOf(job), ...NO_RESUMEN, validados: 0 })
      .expire(stateKey(id), UNFINISHED_KEPT_S)
      .zadd(ownerKey(owner), Date.parse(creadaEn), id)
      .set(positionsKey(id), Buffer.from(positions.buffer, positions.byteOffset, positions.byteLength), 'EX', UNFINISHED_KEPT_S);
    for (let i = 0; i < receipts.length; i += PUSHED_AT_ONCE)
      multi.rpush(receiptsKey(id), ...receipts.slice(i, i + PUSHED_AT_ONCE).map((r) => JSON.stringify(r)));
    multi.expire(receiptsKey(id), UNFINISHED_KEPT_S);
    // Not through the link's half-second limit: a month of receipts takes longer to send.
    const done = await multi.exec();
    const failed = done?.find(([error]) => error);
    if (!done || failed) throw failed?.[0] ?? new Error('the job was not written');
  }

  async get(owner: string, id: string): Promise<Job | undefined> {
    // What never changes, and the state: read side by side (the state alone is ever written again).
    const [fixed, state] = await Promise.all([this.link.send((r) => r.get(jobKey(id))), this.link.send((r) => r.hgetall(stateKey(id)))]);
    if (!fixed) return undefined;
    const job = JSON.parse(fixed) as Fixed;
    return job.owner === owner ? jobOf(job, state) : undefined;
  }

  async list(owner: string): Promise<Job[]> {
    const ids = await this.link.send((r) => r.zrevrange(ownerKey(owner), 0, -1));
    const jobs = await Promise.all(ids.map((id) => this.get(owner, id)));
    // A job whose keys expired is taken off its owner's list.
    const gone = ids.filter((_, i) => !jobs[i]);
    if (gone.length) await this.link.send((r) => r.zrem(ownerKey(owner), ...gone)).catch(() => undefined);
    return jobs.filter((j): j is Job => j !== undefined);
  }

  async begin(owner: string, id: string): Promise<Job | undefined> {
    await this.link.send((r) => r.eval(BEGIN, 1, stateKey(id)));
    return this.get(owner, id);
  }

  async end(owner: string, id: string, estado: 'TERMINADA' | 'CANCELADA' | 'FALLIDA', motivo?: string): Promise<Job | undefined> {
    if (!(await this.get(owner, id))) return undefined;
    const keys = [stateKey(id), jobKey(id), receiptsKey(id), answersKey(id), positionsKey(id)];
    await this.link.send((r) => r.eval(END, keys.length, ...keys, estado, new Date().toISOString(), motivo ?? '', this.keptDays * 86_400));
    return this.get(owner, id);
  }

  async receipts(id: string, from: number, to: number): Promise<JobReceipt[]> {
    if (to <= from) return [];
    const fields = Array.from({ length: to - from }, (_, i) => String(from + i));
    const [listed, answers] = await Promise.all([
      this.link.send((r) => r.lrange(receiptsKey(id), from, to - 1)),
      this.link.send((r) => r.hmget(answersKey(id), ...fields)),
    ]);
    return listed.map((text, i) => {
      const receipt = JSON.parse(text) as JobReceipt;
      const answer = answers[i];
      return answer ? { ...receipt, answer: JSON.parse(answer) as JobReceipt['answer'] } : receipt;
    });
  }

  async positions(id: string, from: number, count: number): Promise<Uint32Array> {
    if (count <= 0) return new Uint32Array(0);
    const held = await this.link.send((r) => r.getrangeBuffer(positionsKey(id), from * 4, (from + count) * 4 - 1));
    const bytes = Uint8Array.from(held);
    return new Uint32Array(bytes.buffer, 0, Math.floor(bytes.length / 4));
  }

  async answer(owner: string, id: string, index: number, receipt: JobReceipt): Promise<Job | undefined> {
    const answer = receipt.answer!;
    await this.link.send((r) =>
      r.eval(ANSWER, 2, stateKey(id), answersKey(id), String(index), JSON.stringify(answer), receipt.weight, categoryOf(answer)),
    );
    return this.get(owner, id);
  }

  /** A fleet's unfinished jobs are its queue's: nothing to take up here. */
  async unfinished(): Promise<Job[]> {
    return [];
  }

  /** Finished jobs' keys expire by themselves. */
  async sweep(): Promise<void> {}

  async rootKey(): Promise<Buffer> {
    await this.link.send((r) => r.set(ROOT_KEY, randomBytes(32), 'NX'));
    return (await this.link.send((r) => r.getBuffer(ROOT_KEY)))!;
  }

  async close(): Promise<void> {}
}

/** The hash fields of a job's state, as written at its start. */
function stateOf(job: Job): Record<string, string> {
  return {
    estado: job.estado,
    terminadaEn: job.terminadaEn ?? '',
    motivo: job.motivo ?? '',
    sealed: job.sealed ? JSON.stringify(job.sealed) : '',
  };
}

/** The job from its two keys; undefined when its state is gone (expired) or unreadable. */
function jobOf(fixed: Fixed, state: Record<string, string>): Job | undefined {
  const estado = STATES.find((s) => s === state['estado']);
  if (!estado) return undefined;
  const count = (field: keyof Resumen) => Number(state[field] ?? 0);
  const resumen: Resumen = {
    aceptados: count('aceptados'),
    anulados: count('anulados'),
    autorizados: count('autorizados'),
    noAutorizados: count('noAutorizados'),
    noExisten: count('noExisten'),
    conError: count('conError'),
  };
  return {
    ...fixed,
    estado,
    validados: Number(state['validados'] ?? 0),
    resumen,
    terminadaEn: state['terminadaEn'] || null,
    motivo: state['motivo'] || null,
    sealed: state['sealed'] ? (JSON.parse(state['sealed']) as Job['sealed']) : null,
  };
}
