/**
 * The yardstick GraphQL server: fastify and mercurius, graphql-js with no compiling executor
 * (mercurius's `jit: 0`; graphql-jit runs code written into a literal argument), serving the
 * bench's query (a) with the caller's token forwarded to the REST API through an undici pool of
 * the gateway's default size. What a GraphQL server that keeps none of the gateway's contract
 * (no limits, no cost, no cache, no log line) costs on the same load.
 *
 *   UPSTREAM_URL=http://127.0.0.1:PORT PORT=0 node dist/bench/mercurius.js   (after npm run build)
 */
import Fastify from 'fastify';
import mercurius, { type IResolvers, type MercuriusContext } from 'mercurius';
import { Pool } from 'undici';
import { DEFAULTS } from '../src/config.js';

const upstream = process.env['UPSTREAM_URL'];
if (!upstream) throw new Error('UPSTREAM_URL is required');
const pool = new Pool(upstream, { connections: DEFAULTS.upstream.connections, pipelining: 1, keepAliveTimeout: 30_000 });

const schema = `
  type Contribuyente {
    ruc: String!
    nombreORazonSocial: String!
    estado: String
    condicion: String
    direccion: String
    departamento: String
    esAgenteDeRetencion: Boolean
    esBuenContribuyente: Boolean
  }
  type Query { contribuyente(ruc: String!): Contribuyente }
`;

interface RucRecord {
  ruc: string;
  nombre_o_razon_social: string;
  estado?: string;
  condicion?: string;
  direccion?: string;
  departamento?: string;
  es_agente_de_retencion?: string;
  es_buen_contribuyente?: string;
}

const siNo = (flag: string | undefined) => (flag === 'SI' ? true : flag === 'NO' ? false : null);

const resolvers: IResolvers = {
  Query: {
    async contribuyente(_root: unknown, { ruc }: { ruc: string }, context: MercuriusContext) {
      const answer = await pool.request({
        method: 'POST',
        path: '/ruc',
        headers: {
          accept: 'application/json',
          'content-type': 'application/json',
          authorization: context.reply.request.headers.authorization ?? '',
        },
        body: JSON.stringify({ ruc }),
      });
      const envelope = (await answer.body.json()) as { success?: boolean; data?: RucRecord; message?: string };
      if (!envelope.success || !envelope.data) throw new Error(envelope.message ?? `upstream answered ${answer.statusCode}`);
      const r = envelope.data;
      return {
        ruc: r.ruc,
        nombreORazonSocial: r.nombre_o_razon_social,
        estado: r.estado,
        condicion: r.condicion,
        direccion: r.direccion,
        departamento: r.departamento,
        esAgenteDeRetencion: siNo(r.es_agente_de_retencion),
        esBuenContribuyente: siNo(r.es_buen_contribuyente),
      };
    },
  },
};

const app = Fastify({ logger: false });
await app.register(mercurius, { schema, resolvers, jit: 0, graphiql: false });
const url = await app.listen({ port: Number(process.env['PORT'] ?? 0), host: '127.0.0.1' });
console.log(`mercurius ready: ${url}`);
process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => pool.close())
    .then(() => process.exit(0));
});
