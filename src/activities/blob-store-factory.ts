import { join } from 'node:path';
import type { ErrandConfig } from '../settings/config';
import { LocalBlobStore, type BlobStore } from './blob-store';
import { S3BlobStore } from './s3-blob-store';

/**
 * The blob store configuration names: S3 when `ERRAND_BLOB_BUCKET` is set (every worker of a deployment,
 * and the API, must see the same blobs), else `<data dir>/blobs` on one machine.
 */
export function createBlobStore(config: Pick<ErrandConfig, 'blobs' | 'dataDir'>): BlobStore {
  return config.blobs ? new S3BlobStore(config.blobs) : new LocalBlobStore(join(config.dataDir, 'blobs'));
}
