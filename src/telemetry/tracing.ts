import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * OpenTelemetry spans for operations and upstream calls, with the caller's trace context
 * (W3C `traceparent`) as parent. A provider of its own, not the global one, so that two apps
 * in one process never mix spans. Built only when OTEL_EXPORTER_OTLP_ENDPOINT is set: without
 * it nothing here runs, so tracing costs nothing.
 *
 * Attributes name operations, REST paths, statuses, attempts and cache outcomes; never a
 * token, a SOL credential, a RUC or a licence number.
 */
export class Tracing {
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #propagator = new W3CTraceContextPropagator();

  constructor(processor: SpanProcessor) {
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'registro-peru-gateway' }),
      spanProcessors: [processor],
    });
    this.#tracer = this.#provider.getTracer('registro-peru-gateway');
  }

  /** Spans exported over OTLP/HTTP to `<endpoint>/v1/traces`, in batches. */
  static otlp(endpoint: string): Tracing {
    return new Tracing(new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` })));
  }

  /** The span of one GraphQL request, child of the caller's trace when it sent one. */
  startOperation(headers: Headers): Span {
    const parent = this.#propagator.extract(ROOT_CONTEXT, headers, headerGetter);
    return this.#tracer.startSpan('graphql.operation', { kind: SpanKind.SERVER }, parent);
  }

  /** A span inside an operation's span. */
  startChild(parent: Span, name: string, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): Span {
    return this.#tracer.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent));
  }

  static end(span: Span, attributes: Attributes, failed: boolean): void {
    span.setAttributes(attributes);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}
