// Preloaded (`node --expose-gc --require`) into a worker child by a bench figure that asks for it, never
// into errand itself: SIGWINCH runs a full collection of the worker's main heap, so a memory figure can
// compare what the worker keeps rather than wherever its last collection happened to leave the heap.
// SIGWINCH because Temporal's runtime takes SIGINT, SIGTERM, SIGQUIT and SIGUSR2 as shutdown signals and
// Node keeps SIGUSR1 for its inspector; a terminal resize means nothing to a worker.
/* global process */
'use strict';
process.on('SIGWINCH', () => {
  if (typeof globalThis.gc === 'function') globalThis.gc();
});
