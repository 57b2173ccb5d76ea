import { describe, expect, test } from 'vitest';
import { commonJsExports } from '../../src/sources/common-js-exports';

/**
 * The two shapes a CommonJS package's `import()` takes: Node's (and tsx's) namespace with the exports by
 * name beside `default`, and an esbuild chunk's, with `default` only (the CLI bundle, the Lambda bundle).
 */

class Interceptor {}

describe('commonJsExports', () => {
  test("takes the exports by name where Node's loader gives them", () => {
    const loaded = { Interceptor, default: { Interceptor } };
    expect(commonJsExports(loaded, 'Interceptor', 'pkg')).toBe(loaded);
  });

  test("takes default's properties where an esbuild chunk gives only default", () => {
    const exports = { Interceptor };
    const loaded = { default: exports } as unknown as { Interceptor: typeof Interceptor };
    expect(commonJsExports(loaded, 'Interceptor', 'pkg').Interceptor).toBe(Interceptor);
  });

  test('names the package and the export when neither has it', () => {
    const loaded = { default: { Other: Interceptor } } as unknown as { Interceptor: typeof Interceptor };
    expect(() => commonJsExports(loaded, 'Interceptor', '@scope/pkg')).toThrow('@scope/pkg loaded without its export "Interceptor"');
  });
});
