import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { maxS3ListPages, maxSourceFileBytes, maxStoreEntries } from '../contracts/limits/sources';
import { messageOf } from './directory-store';
import { entryKindOf, formatBytes, type SourceStore, type StoreEntry, type StoreListing, type StoreReadResult } from './source-store';
import { loadS3Sdk } from './aws-s3-sdk';

/** Configuration of an S3 store. */
export interface S3StoreOptions {
  bucket: string;
  /** Key prefix (a "folder"); a trailing `/` is added when missing. Empty = bucket root. */
  prefix?: string;
  /** Custom endpoint (MinIO, SeaweedFS, …). */
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Path-style addressing (needed by most S3-compatible servers). */
  forcePathStyle?: boolean;
  /** A ready client (overrides the connection fields above). */
  client?: S3Client;
}

interface CachedObject {
  etag: string;
  version: string;
  content: string;
}

/**
 * Sources under an S3 prefix (direct children only, like a directory). Listing pages through
 * ListObjectsV2; reads revalidate cached content with a conditional GET (If-None-Match), so unchanged
 * files cost a 304. The VersionId (versioned buckets) or else the ETag is the version.
 */
export class S3Store implements SourceStore {
  readonly id: string;
  private client: Promise<S3Client> | undefined;
  private readonly clientConfig: S3ClientConfig;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly cache = new Map<string, CachedObject>();
  private readonly sizes = new Map<string, number>();

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    const prefix = (options.prefix ?? '').replace(/^\/+/, '');
    this.prefix = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.id = `s3://${this.bucket}/${this.prefix}`;
    const config: S3ClientConfig = { region: options.region ?? 'us-east-1' };
    if (options.endpoint) config.endpoint = options.endpoint;
    if (options.credentials) config.credentials = options.credentials;
    if (options.forcePathStyle !== undefined) config.forcePathStyle = options.forcePathStyle;
    // Fail fast: a store that is down is reported stale, not retried for long inside a listing.
    config.maxAttempts = 2;
    this.clientConfig = config;
    if (options.client) this.client = Promise.resolve(options.client);
  }

  /**
   * The AWS SDK (over a MB of code) is loaded at the first listing or read, not when the store is
   * configured: every process that builds the source stores (API, CLI) would otherwise load it.
   */
  private async sdk(): Promise<{ client: S3Client; commands: typeof S3Sdk }> {
    const commands = await loadS3Sdk();
    this.client ??= Promise.resolve(new commands.S3Client(this.clientConfig));
    return { client: await this.client, commands };
  }

  describe(): string {
    return `S3 ${this.id}`;
  }

  folderOf(path: string): string {
    const slash = path.lastIndexOf('/');
    return `s3://${this.bucket}/${this.prefix}${slash === -1 ? '' : path.slice(0, slash)}`.replace(/\/$/, '');
  }

  async list(): Promise<StoreListing> {
    const entries: StoreEntry[] = [];
    const problems: string[] = [];
    let token: string | undefined;
    const { client, commands } = await this.sdk();
    for (let page = 0; page < maxS3ListPages; page += 1) {
      let response;
      try {
        response = await client.send(
          new commands.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, Delimiter: '/', ContinuationToken: token }),
        );
      } catch (error) {
        throw new Error(`${this.describe()}: listing failed: ${describeS3Error(error)}`);
      }
      for (const object of response.Contents ?? []) {
        const key = object.Key;
        if (!key || entries.length >= maxStoreEntries) continue;
        const path = key.slice(this.prefix.length);
        const kind = entryKindOf(path);
        if (!kind || path === '') continue;
        const size = object.Size ?? 0;
        this.sizes.set(path, size);
        if (size > maxSourceFileBytes) {
          problems.push(`${this.describe()}: ${path}: refused: file is ${formatBytes(size)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
          continue;
        }
        // The listing carries no VersionId; the ETag is what tells the catalog a file changed.
        entries.push({ path, kind, version: unquote(object.ETag ?? '') });
      }
      if (!response.IsTruncated || !response.NextContinuationToken) return { entries, problems };
      token = response.NextContinuationToken;
    }
    problems.push(`${this.describe()}: listing stopped after ${maxS3ListPages} pages`);
    return { entries, problems };
  }

  async read(path: string): Promise<StoreReadResult> {
    if (path.split('/').includes('..')) throw new Error(`${this.describe()}: ${path} is outside the store`);
    const cached = this.cache.get(path);
    const knownSize = this.sizes.get(path);
    if (knownSize !== undefined && knownSize > maxSourceFileBytes) {
      throw new Error(`${this.describe()}: ${path}: refused: file is ${formatBytes(knownSize)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
    }
    const { client, commands } = await this.sdk();
    try {
      const response = await client.send(
        new commands.GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + path, IfNoneMatch: cached ? `"${cached.etag}"` : undefined }),
      );
      const size = response.ContentLength ?? 0;
      if (size > maxSourceFileBytes) {
        // Refused by its announced size: the body is dropped unread (destroying the stream closes the
        // connection), never downloaded just to be thrown away.
        discardBody(response.Body);
        throw new Error(`${this.describe()}: ${path}: refused: file is ${formatBytes(size)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
      }
      const content = (await response.Body?.transformToString('utf8')) ?? '';
      const etag = unquote(response.ETag ?? '');
      const entry = { etag, version: response.VersionId ?? etag, content };
      this.cache.set(path, entry);
      return { content, version: entry.version };
    } catch (error) {
      if (cached && isNotModified(error)) return { content: cached.content, version: cached.version };
      if (error instanceof Error && error.message.includes('refused:')) throw error;
      throw new Error(`${this.describe()}: reading ${path} failed: ${describeS3Error(error)}`);
    }
  }
}

/** Stops a response body stream without reading it. */
function discardBody(body: unknown): void {
  if (typeof body === 'object' && body !== null && 'destroy' in body && typeof body.destroy === 'function') body.destroy();
}

function unquote(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}

/** An error answered by S3 (an S3ServiceException, recognised by shape so the SDK need not be loaded to check). */
function isS3ServiceError(error: unknown): error is Error & { $metadata: { httpStatusCode?: number } } {
  return error instanceof Error && '$metadata' in error && typeof error.$metadata === 'object' && error.$metadata !== null && '$fault' in error;
}

function isNotModified(error: unknown): boolean {
  if (isS3ServiceError(error)) return error.$metadata.httpStatusCode === 304;
  return typeof error === 'object' && error !== null && (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 304;
}

function describeS3Error(error: unknown): string {
  if (isS3ServiceError(error)) return `${error.name} (HTTP ${error.$metadata.httpStatusCode ?? '?'}): ${error.message}`;
  return messageOf(error);
}
