import { DEFAULT_TOKENS, LICENCES, SANDBOX_TOKEN, TAXPAYERS, TRIGGERS } from './data.js';
import { SUNAT_SAMPLE } from './sunat.js';

/** What a person starting the sandbox must read: sample data only, and what to ask it with. */
export function sandboxBanner(url: string, why: string, signInToken?: string): string {
  const signIn = signInToken
    ? [
        ' AUTH_JWKS_URL=sandbox: send a sign-in token (JWT), not a plan token. One for "demo", a day long:',
        `   Authorization: Bearer ${signInToken}`,
        ` Another subject's (the sandbox's own port): curl -s ${url}/__sandbox/token?sub=ana`,
      ]
    : [];
  return [
    '',
    '================================================================================',
    ` SANDBOX:${why}`,
    ` It serves SAMPLE DATA (invented taxpayers and licences) from ${url}.`,
    ' Set UPSTREAM_URL=https://api.apiperu.dev to use the real service.',
    signInToken
      ? ` Sandbox plan tokens (the gateway sends ${SANDBOX_TOKEN} itself; callers send the sign-in token below):`
      : ' Sandbox tokens (send as "Authorization: Bearer <token>"):',
    ...DEFAULT_TOKENS.map((t) => `   ${t.token.padEnd(14)} plan ${t.plan}, ${t.quota} queries`),
    ` Sample RUCs: companies ${TAXPAYERS.filter((t) => t.ruc.startsWith('20'))
      .slice(0, 4)
      .map((t) => t.ruc)
      .join(' ')}; natural persons (RUC 10) ${TAXPAYERS.filter((t) => t.ruc.startsWith('10'))
      .slice(0, 2)
      .map((t) => t.ruc)
      .join(' ')}`,
    ` Sample licences: ${LICENCES.slice(0, 3)
      .map((l) => l.num_licencia)
      .join(' ')}`,
    ` Failure triggers (RUCs): ${Object.entries(TRIGGERS)
      .map(([name, k]) => `${name}=${k.ruc}`)
      .join(' ')}`,
    ...signIn,
    ` SUNAT's free receipt validation (credencialesApi, docs/sunat.md): rucEmpresa ${SUNAT_SAMPLE.rucEmpresa}, clientId ${SUNAT_SAMPLE.clientId},`,
    `   clientSecret ${SUNAT_SAMPLE.clientSecret}; series S500 S429 SLNT S401 SBAD trigger SUNAT's faults`,
    ` With PADRON=sandbox, its register's next day: curl -s -X POST ${url}/__sandbox/padron/siguiente-dia`,
    `   and a webhook receiver to subscribe: ${url}/__sandbox/webhooks/recibir (docs/webhooks.md)`,
    '================================================================================',
    '',
  ].join('\n');
}
