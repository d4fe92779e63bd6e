import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';

/**
 * A small second subgraph, as a BFF team's would be: `Pedido` holds the customer's RUC and
 * resolves `cliente: Contribuyente` by reference, which the router asks the gateway for.
 * `pedidos(rucs)` makes one order per RUC given, in order.
 */
export const PEDIDOS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type Pedido @key(fields: "id") {
    id: ID!
    rucCliente: String!
    total: String!
    cliente: Contribuyente
  }

  type Contribuyente @key(fields: "ruc", resolvable: false) {
    ruc: String!
  }

  type Query {
    pedidos(rucs: [String!]!): [Pedido!]!
  }
`;

interface Pedido {
  id: string;
  rucCliente: string;
  total: string;
}

export async function startPedidos(): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const schema = buildSubgraphSchema({
    typeDefs: parse(PEDIDOS_SDL),
    resolvers: {
      Query: {
        pedidos: (_: unknown, { rucs }: { rucs: string[] }): Pedido[] =>
          rucs.map((ruc, i) => ({ id: `P-${i + 1}`, rucCliente: ruc, total: `${(i + 1) * 100}.00` })),
      },
      Pedido: { cliente: (p: Pedido) => ({ __typename: 'Contribuyente', ruc: p.rucCliente }) },
    },
  });
  const server = createServer(createYoga({ schema, logging: false, maskedErrors: false }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
