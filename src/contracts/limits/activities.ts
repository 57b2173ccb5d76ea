/**
 * The limits of the blob store and the conversation store (owned by src/activities). Part of errand's defaults
 * and limits: src/contracts/limits.ts re-exports every file of this folder.
 */

// ---- blob store and conversations (owned by src/activities) --------------------------------------
/** Longest blob key, in characters. */
export const blobKeyMaxLength = 512;
/** Most keys one blob list returns; a larger listing is an error asking for a narrower prefix. */
export const blobListMaxKeys = 100_000;
/** Messages per conversation chunk blob: a read of n messages needs about n / this many blob reads. */
export const conversationChunkSize = 50;
/** Conversations kept in the in-process LRU cache of read messages (entries are immutable, so caching is safe). */
export const conversationCacheEntries = 1_024;
/** Total characters of messages the conversation cache may hold across all conversations. */
export const conversationCacheMaxChars = 64 * 1024 * 1024;
/** Blob reads a conversation read issues at once. */
export const conversationReadConcurrency = 16;
/**
 * After an S3-compatible server answered 501 to a conditional write (`If-None-Match: *`), puts go without
 * the header for this long, then try it again: one 501 (say, from a proxy) must not turn the guard off for
 * the life of the process.
 */
export const s3ConditionalWriteRetryMs = 10 * 60_000;
