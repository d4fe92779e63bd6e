import { readFileSync } from 'node:fs';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EnvSchema, loadConfig } from '../../src/config.js';
import { OPS_ROUTES } from '../../src/http/health.js';

/**
 * deploy/kubernetes: valid against Kubernetes' own schemas (kubernetes-models), and in step with
 * the gateway's configuration: every variable one it reads, ports and probe paths its own, a
 * grace period longer than its shutdown deadline.
 */
const DIR = new URL('../../deploy/kubernetes/', import.meta.url);
const read = (file: string) => parse(readFileSync(new URL(file, DIR), 'utf8')) as Record<string, never>;

const deployment = new Deployment(read('deployment.yaml'));
const service = new Service(read('service.yaml'));
const pdb = new PodDisruptionBudget(read('pdb.yaml'));
const configMap = new ConfigMap(read('configmap.yaml'));
const secret = new Secret(read('secret.example.yaml'));
const settings = { ...configMap.data, ...secret.stringData };
const container = deployment.spec!.template.spec!.containers[0]!;
const portNamed = (name: string) => container.ports!.find((p) => p.name === name)!.containerPort;

describe('the Kubernetes manifests', () => {
  it("are valid against Kubernetes' schemas", () => {
    for (const manifest of [deployment, service, pdb, configMap, secret]) expect(() => manifest.validate(), manifest.kind).not.toThrow();
  });

  it('set only variables the gateway reads, and ones it accepts', () => {
    const known = Object.keys(EnvSchema.shape);
    expect(Object.keys(settings).filter((name) => !known.includes(name))).toEqual([]);
    expect(() => loadConfig(settings)).not.toThrow();
    // The secret ones come from the Secret, never the ConfigMap.
    expect(Object.keys(configMap.data!)).not.toContain('CACHE_KEY_SECRET');
    expect(Object.keys(configMap.data!)).not.toContain('REDIS_URL');
    expect(container.envFrom).toEqual([
      { configMapRef: { name: configMap.metadata!.name } },
      { secretRef: { name: secret.metadata!.name } },
    ]);
  });

  it("probe the gateway's own ports and routes: ready on /ready, alive on /health, on the operations port", () => {
    const config = loadConfig(settings);
    expect(portNamed('graphql')).toBe(config.port);
    expect(portNamed('ops')).toBe(config.opsPort);
    expect(container.readinessProbe!.httpGet).toEqual({ path: '/ready', port: 'ops' });
    expect(container.livenessProbe!.httpGet).toEqual({ path: '/health', port: 'ops' });
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe])
      expect(OPS_ROUTES).toContain(probe!.httpGet!.path);
  });

  it('keep serving through a stop until the readiness probe has seen 503, and give it more time than its delay and deadline', () => {
    const config = loadConfig(settings);
    const probe = container.readinessProbe!;
    expect(config.shutdownDelayMs).toBeGreaterThanOrEqual(probe.periodSeconds! * probe.failureThreshold! * 1000);
    expect(deployment.spec!.template.spec!.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(
      config.shutdownDelayMs + config.shutdownTimeoutMs,
    );
  });

  it('select the pods the Deployment makes, on ports the container names', () => {
    const labels = deployment.spec!.template.metadata!.labels!;
    expect(labels).toMatchObject(deployment.spec!.selector.matchLabels!);
    expect(labels).toMatchObject(service.spec!.selector!);
    expect(labels).toMatchObject(pdb.spec!.selector!.matchLabels!);
    for (const port of service.spec!.ports!) expect(container.ports!.map((p) => p.name)).toContain(port.targetPort);
  });
});
