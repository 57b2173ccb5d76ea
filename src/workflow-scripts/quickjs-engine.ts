/**
 * The sandbox's engine: QuickJS compiled to WebAssembly (decision 0037), a new instance for every round.
 *
 * Every round gets a WebAssembly instance of its own, with its own memory, dropped whole when the round
 * ends: a script stopped by a limit can leave the engine's heap in a state its own teardown asserts on (and
 * an assertion aborts the instance), so nothing of one round may carry over into the next. What rounds share
 * is the compiled module, which is code and holds no state: compiling it again for every round cost about
 * 45 ms of CPU on V8's background threads each time (its optimising tier compiles the hot functions anew),
 * on a worker whose cores the agents' workflows need.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import releaseSyncVariant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant, type CustomizeVariantOptions, type QuickJSWASMModule } from 'quickjs-emscripten-core';

/** A compiled WebAssembly module, as the engine's loader takes it (the compiler's ES library has no WebAssembly). */
type WasmModule = Exclude<NonNullable<CustomizeVariantOptions['wasmModule']>, () => Promise<unknown>>;
/** WebAssembly's constructor of a compiled module: Node has it; the compiler's ES library does not declare it. */
const { Module: CompiledModule } = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => WasmModule } }).WebAssembly;

/** The engine's compiled module, once the first round has found its file; per thread (each has its own). */
let compiled: WasmModule | undefined;

/** A fresh instance of the engine; the first call in a thread loads it as the package does and keeps its compiled module. */
export async function loadEngine(): Promise<QuickJSWASMModule> {
  if (compiled !== undefined) return newQuickJSWASMModuleFromVariant(newVariant(releaseSyncVariant, { wasmModule: compiled }));
  // The package finds its .wasm beside its loader (in node_modules, or beside the chunk of a bundle that
  // carries it); the first load asks it where, and the file there is compiled once for the next rounds.
  let located: string | undefined;
  const engine = await newQuickJSWASMModuleFromVariant(newVariant(releaseSyncVariant, {
    locateFile: (name: string, prefix: string) => {
      located = `${prefix}${name}`;
      return located;
    },
  }));
  if (located !== undefined) compiled = new CompiledModule(readFileSync(located.startsWith('file:') ? fileURLToPath(located) : located));
  return engine;
}
