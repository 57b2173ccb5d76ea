import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seaweedPath } from '../../src/dev/tool-paths';
import { distinctFreePorts } from './free-port';

/** A running S3-compatible server (SeaweedFS) for tests, with the credentials it accepts. */
export interface S3TestServer {
  /** `http://127.0.0.1:<port>` of the S3 API. */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** Path of the server's log file (kept after stop for post-mortems). */
  logPath: string;
  /** Milliseconds from spawn until S3 answered. */
  startupMs: number;
  /** Stops the process this harness started (by pid) and removes its data folder. */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * Waits until the S3 port answers HTTP. Any HTTP status (403 for an anonymous ListBuckets) proves the
 * gateway is up; connection errors mean it is not yet.
 */
async function waitForS3(endpoint: string, child: ChildProcess, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`SeaweedFS exited early with code ${child.exitCode}`);
    try {
      const response = await fetch(endpoint, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`SeaweedFS S3 did not answer at ${endpoint} within ${deadlineMs} ms`);
}

/**
 * Starts SeaweedFS (`weed mini`: master, volume, filer and S3 gateway in one process) on random free
 * loopback ports, its data in a fresh temp folder, with one identity whose keys are returned.
 */
export async function startS3Server(): Promise<S3TestServer> {
  const folder = mkdtempSync(join(tmpdir(), 'errand-s3-'));
  const dataDir = join(folder, 'data');
  const logPath = join(folder, 'weed.log');
  const accessKeyId = 'errandtest';
  const secretAccessKey = 'errandtestsecret';
  const configPath = join(folder, 's3.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      identities: [
        {
          name: 'errand-test',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'List', 'Tagging', 'Write'],
        },
      ],
    }),
  );
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc, admin, adminGrpc] = await distinctFreePorts(10);
  const args = [
    'mini',
    `-dir=${dataDir}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    `-s3.config=${configPath}`,
    // Its local sockets default to /tmp/seaweedfs-*.sock and stay there after it stops: keep them in its folder.
    `-s3.localSocket=${join(folder, 's3.sock')}`,
    `-filer.localSocket=${join(folder, 'filer.sock')}`,
    // The Iceberg and Lance catalogs listen on fixed ports (8181, 9101): a second server at the same time
    // (two test files in parallel) died on them. errand uses neither.
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    '-admin.ui=false',
    // The admin server runs without its UI, on fixed default ports unless told: two servers at once would share them.
    `-admin.port=${admin}`,
    `-admin.port.grpc=${adminGrpc}`,
    '-webdav=false',
  ];
  const log = createWriteStream(logPath);
  const started = Date.now();
  const child = spawn(seaweedPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: folder });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const endpoint = `http://127.0.0.1:${s3}`;

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.pid !== undefined) {
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      process.kill(child.pid, 'SIGTERM');
      const graceful = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
      if (!graceful && child.exitCode === null) {
        process.kill(child.pid, 'SIGKILL');
        await exited;
      }
    }
    log.end();
    rmSync(dataDir, { recursive: true, force: true });
    // Its gRPC servers' unix sockets have no flag and always go to /tmp, named by port; they outlive it.
    for (const [component, port] of [['master', masterGrpc], ['volume', volumeGrpc], ['filer', filerGrpc], ['s3', s3Grpc], ['admin', adminGrpc]] as const) {
      rmSync(join('/tmp', `seaweedfs-${component}-grpc-${port}.sock`), { force: true });
    }
  };

  try {
    await waitForS3(endpoint, child, 30_000);
  } catch (error) {
    await stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${reason}; SeaweedFS log: ${logPath}`);
  }
  return { endpoint, accessKeyId, secretAccessKey, region: 'us-east-1', logPath, startupMs: Date.now() - started, stop };
}
