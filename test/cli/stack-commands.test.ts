import { describe, expect, it } from 'vitest';
import { devExtrasBanner } from '../../src/cli/stack-commands';

/** `errand dev`'s banner names what is on besides the defaults: trace export and an S3 blob store. */

describe("errand dev's banner", () => {
  it('says where traces go and which bucket holds the blobs, when they are on', () => {
    const lines = devExtrasBanner({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      config: { blobs: { bucket: 'errand-blobs', prefix: 'dev/', endpoint: 'http://127.0.0.1:8333' } },
    });
    expect(lines).toEqual([
      '  Traces       OTLP/HTTP to http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_ENDPOINT)',
      '  Blob store   S3 bucket errand-blobs, prefix dev/ at http://127.0.0.1:8333 (ERRAND_BLOB_BUCKET): conversations and stored results',
    ]);
  });

  it('adds nothing when neither is on', () => {
    expect(devExtrasBanner({ env: {}, config: { blobs: undefined } })).toEqual([]);
  });
});
