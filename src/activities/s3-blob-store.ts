import { createHash } from 'node:crypto';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { loadS3Sdk } from '../sources/aws-s3-sdk';
import { blobListMaxKeys, s3ConditionalWriteRetryMs } from '../contracts/limits/activities';
import { BlobConflictError, validateBlobKey, validateBlobPrefix, type BlobStore } from './blob-store';

/** Connection settings of an S3 (or S3-compatible) blob store. */
export interface S3BlobStoreOptions {
  bucket: string;
  /** Key prefix inside the bucket (e.g. `errand/blobs/`); a trailing `/` is added when missing. Empty = bucket root. */
  prefix?: string;
  region?: string;
  /** Endpoint URL for S3-compatible servers (SeaweedFS, MinIO); omit for AWS. */
  endpoint?: string;
  /** Static credentials; omit to use the AWS default credential chain (env, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Path-style addressing (`endpoint/bucket/key`), needed by most S3-compatible servers. */
  forcePathStyle?: boolean;
  /**
   * Send `If-None-Match: *` on put so the server refuses to overwrite (AWS S3 since 2024, recent MinIO and
   * SeaweedFS). Default true. A put the server rejects with 501 (header not implemented) is retried without
   * it, and puts go without it for a while (`s3ConditionalWriteRetryMs`), then try it again.
   */
  conditionalWrites?: boolean;
}

/**
 * BlobStore on S3. Entries are immutable, as in the local store: a put first checks whether the key
 * exists (HEAD, comparing the ETag with the body's MD5 — true for single-part uploads without SSE-KMS —
 * and reading the body back when the ETag cannot decide), then writes with `If-None-Match: *` so that a
 * racing put of another body cannot overwrite. A 412 from that write means someone else won the race:
 * success if they wrote the same body, a BlobConflictError otherwise.
 */
export class S3BlobStore implements BlobStore {
  private client: S3Client | undefined;
  private readonly clientConfig: S3ClientConfig;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly conditionalWrites: boolean;
  /** Until when puts skip the conditional header after a 501 (epoch ms); 0 = use it. */
  private conditionalWritesOffUntil = 0;
  private readonly now: () => number;

  constructor(options: S3BlobStoreOptions, client?: S3Client, now: () => number = Date.now) {
    this.now = now;
    if (options.bucket.length === 0) throw new Error('S3 blob store setting "bucket" is empty; give the bucket name');
    this.bucket = options.bucket;
    const prefix = options.prefix ?? '';
    this.prefix = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.conditionalWrites = options.conditionalWrites ?? true;
    this.client = client;
    this.clientConfig = {
      region: options.region ?? 'us-east-1',
      ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
      ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
      forcePathStyle: options.forcePathStyle ?? false,
    };
  }

  /**
   * The AWS SDK (over a MB of code) is loaded at the first put, get or list, not when the store is built:
   * every process that builds its dependencies (API, worker, CLI) would otherwise load it at start, S3 or not
   * (as the source store does, src/sources/s3-store.ts).
   */
  private async sdk(): Promise<{ client: S3Client; commands: typeof S3Sdk }> {
    const commands = await loadS3Sdk();
    this.client ??= new commands.S3Client(this.clientConfig);
    return { client: this.client, commands };
  }

  async put(key: string, body: string): Promise<void> {
    return this.putOnce(key, body, this.conditionalWrites && this.now() >= this.conditionalWritesOffUntil);
  }

  private async putOnce(key: string, body: string, conditional: boolean): Promise<void> {
    validateBlobKey(key);
    const objectKey = this.prefix + key;
    const md5 = createHash('md5').update(body, 'utf8').digest();
    const existingEtag = await this.headEtag(objectKey);
    if (existingEtag !== undefined) return this.assertExistingMatches(key, existingEtag, md5, body);
    const { client, commands } = await this.sdk();
    try {
      await client.send(
        new commands.PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          Body: body,
          ContentType: 'application/json; charset=utf-8',
          ContentMD5: md5.toString('base64'),
          ...(conditional ? { IfNoneMatch: '*' } : {}),
        }),
      );
    } catch (error) {
      const status = httpStatus(error);
      // 412: the key appeared since the HEAD; 409: a concurrent conditional write is in flight.
      if (status === 412 || status === 409) {
        const etag = await this.headEtag(objectKey);
        if (etag !== undefined) return this.assertExistingMatches(key, etag, md5, body);
      }
      if (status === 501 && conditional) {
        // Not for good: the 501 may come from a proxy or a server mid-upgrade; the header is tried again later.
        this.conditionalWritesOffUntil = this.now() + s3ConditionalWriteRetryMs;
        return this.putOnce(key, body, false);
      }
      throw error;
    }
  }

  async get(key: string): Promise<string | undefined> {
    validateBlobKey(key);
    const { client, commands } = await this.sdk();
    try {
      const response = await client.send(new commands.GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
      if (response.Body === undefined) return '';
      return await response.Body.transformToString('utf8');
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    validateBlobPrefix(prefix);
    const keys: string[] = [];
    let continuationToken: string | undefined;
    const { client, commands } = await this.sdk();
    // Bounded by blobListMaxKeys: each page adds up to 1000 keys.
    do {
      const page = await client.send(
        new commands.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, ContinuationToken: continuationToken }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key !== undefined) keys.push(object.Key.slice(this.prefix.length));
      }
      if (keys.length > blobListMaxKeys) {
        throw new Error(`blob list of prefix ${JSON.stringify(prefix)} has more than ${blobListMaxKeys} keys; use a narrower prefix`);
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    validateBlobKey(key);
    const { client, commands } = await this.sdk();
    // S3 answers 204 whether or not the object was there: a retried delete is a no-op.
    await client.send(new commands.DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
  }

  /** The ETag of an object (quotes removed), or undefined if it does not exist. */
  private async headEtag(objectKey: string): Promise<string | undefined> {
    const { client, commands } = await this.sdk();
    try {
      const head = await client.send(new commands.HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return (head.ETag ?? '').replace(/"/g, '');
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  private async assertExistingMatches(key: string, etag: string, md5: Buffer, body: string): Promise<void> {
    if (etag.toLowerCase() === md5.toString('hex')) return;
    // A multipart or SSE-KMS ETag is not the MD5: only the body itself can decide.
    const existing = await this.get(key);
    if (existing !== body) throw new BlobConflictError(key);
  }
}

/** The HTTP status of an S3 service error (the SDK's errors carry `$metadata`), else undefined. */
function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata: unknown = error.$metadata;
  if (typeof metadata !== 'object' || metadata === null || !('httpStatusCode' in metadata)) return undefined;
  return typeof metadata.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}
