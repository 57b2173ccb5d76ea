import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jaegerPath } from '../../src/dev/tool-paths';
import { distinctFreePorts } from './free-port';

/**
 * A real Jaeger (v2, built from the Go module proxy by scripts/install-tools.ts) for one test file: an
 * OTLP/HTTP receiver and the query API on free loopback ports, traces kept in memory. Nothing else
 * listens (no gRPC receiver, no metrics, no health check), so parallel test files never share a port.
 */

/** A running Jaeger. */
export interface RunningJaeger {
  /** Base URL of the OTLP/HTTP receiver (what `OTEL_EXPORTER_OTLP_ENDPOINT` takes). */
  otlpUrl: string;
  /** Base URL of the query service (its HTTP API and UI). */
  queryUrl: string;
  /** Stops the process (by its pid) and removes its folder. */
  stop(): Promise<void>;
}

/** One span as Jaeger's query API (`/api/traces/<id>`) answers it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  tags: { key: string; type: string; value: unknown }[];
  processID: string;
}

/** One trace as Jaeger's query API answers it. */
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

function configYaml(ports: { otlp: number; queryHttp: number; queryGrpc: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memory_store
    enable_tracing: false
    http:
      endpoint: 127.0.0.1:${ports.queryHttp}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`;
}

async function waitForQuery(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`jaeger exited with code ${child.exitCode} before its query API answered:\n${output()}`);
    try {
      const response = await fetch(`${url}/api/services`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
  throw new Error(`jaeger's query API at ${url} did not answer within ${timeoutMs} ms:\n${output()}`);
}

/** Starts Jaeger; throws with its output if it does not come up. */
export async function startJaeger(): Promise<RunningJaeger> {
  const binary = jaegerPath();
  if (!existsSync(binary)) throw new Error(`jaeger is not installed at ${binary}; run "npx tsx scripts/install-tools.ts jaeger"`);
  const folder = mkdtempSync(join(tmpdir(), 'errand-jaeger-'));
  const [otlp, queryHttp, queryGrpc] = (await distinctFreePorts(3)) as [number, number, number];
  const config = join(folder, 'jaeger.yaml');
  writeFileSync(config, configYaml({ otlp, queryHttp, queryGrpc }));
  let output = '';
  const child = spawn(binary, ['--config', config], { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const queryUrl = `http://127.0.0.1:${queryHttp}`;
  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) {
      const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
      process.kill(child.pid, 'SIGTERM');
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    await waitForQuery(queryUrl, child, () => output, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { otlpUrl: `http://127.0.0.1:${otlp}`, queryUrl, stop };
}

/** The trace with this id from Jaeger's query API, or undefined while Jaeger has none. */
export async function jaegerTrace(queryUrl: string, traceId: string): Promise<JaegerTrace | undefined> {
  const response = await fetch(`${queryUrl}/api/traces/${traceId}`);
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`jaeger answered ${response.status} for trace ${traceId}: ${await response.text()}`);
  const body = (await response.json()) as { data?: JaegerTrace[] };
  return body.data?.[0];
}

/** A span's tag value by key. */
export function tagOf(span: JaegerSpan, key: string): unknown {
  return span.tags.find((tag) => tag.key === key)?.value;
}
