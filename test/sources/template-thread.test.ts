import { describe, expect, test } from 'vitest';
import { renderRecipeOffThread } from '../../src/sources/template-thread';

/**
 * Recipe files render in a thread of their own: what the engine's limits miss ends at the thread's
 * deadline or heap limit as a template-limit error naming the file, and the next render works.
 */

const plain = 'title: plain\ndescription: says hello\nprompt: "Hello, {{ name }}"\n';
/** Legal work (below the step limit) that takes far longer than a few milliseconds. */
const slow = `title: slow\ndescription: d\nprompt: "{% for i in range(15000) %}{% if i == -1 %}x{% endif %}{% endfor %}done"\n`;
/** A rendered document of many small YAML nodes: parsing it needs far more than a small heap. */
const heavy = 'title: heavy\ndescription: d\nprompt: p\nlist: [{% for i in range(30000) %}{a: 1, b: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]},{% endfor %}]\n';

describe('rendering off the event loop', () => {
  test('renders a recipe file in a thread, with the values kept as data', async () => {
    const rendered = await renderRecipeOffThread(plain, { name: 'Ada' }, 'plain.yaml', 'plain.yaml');
    expect(rendered).toEqual({ ok: true, document: { title: 'plain', description: 'says hello', prompt: 'Hello, Ada' } });
    // Template errors come back as results naming the file.
    const refused = await renderRecipeOffThread(plain, {}, 'plain.yaml', 'plain.yaml');
    expect(refused).toEqual({ ok: false, error: 'plain.yaml: template error: variable "name" is undefined (goose\'s strict mode: every value a template uses must exist)' });
  });

  test('stops a render past its deadline with a template-limit error, and the next render works', async () => {
    const stopped = await renderRecipeOffThread(slow, {}, 'slow.yaml', 'slow.yaml', {}, { deadlineMs: 1 });
    expect(stopped).toEqual({ ok: false, error: 'slow.yaml: template limit: rendering took longer than 1 ms (the limit for one template)' });
    const next = await renderRecipeOffThread(plain, { name: 'Grace' }, 'plain.yaml', 'plain.yaml');
    expect(next).toMatchObject({ ok: true, document: { prompt: 'Hello, Grace' } });
  });

  test('ends a render that would fill the thread\'s heap, not the process', async () => {
    const ended = await renderRecipeOffThread(heavy, {}, 'heavy.yaml', 'heavy.yaml', {}, { heapMb: 48, deadlineMs: 120_000 });
    expect(ended).toEqual({ ok: false, error: 'heavy.yaml: template limit: rendering needed more than 48 MiB of memory (the limit for one template)' });
    const next = await renderRecipeOffThread(plain, { name: 'Linus' }, 'plain.yaml', 'plain.yaml');
    expect(next).toMatchObject({ ok: true, document: { prompt: 'Hello, Linus' } });
  }, 120_000);

  test('renders that overlap each get a thread: a slow one does not hold the others', async () => {
    const [slowOne, ...quick] = await Promise.all([
      renderRecipeOffThread(slow, {}, 'slow.yaml', 'slow.yaml'),
      ...['a', 'b', 'c'].map((name) => renderRecipeOffThread(plain, { name }, `${name}.yaml`, `${name}.yaml`)),
    ]);
    expect(slowOne).toMatchObject({ ok: true, document: { prompt: 'done' } });
    expect(quick.map((result) => (result.ok ? (result.document as { prompt: string }).prompt : result.error))).toEqual(['Hello, a', 'Hello, b', 'Hello, c']);
  });
});
