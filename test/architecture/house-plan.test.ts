import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { importCycles, importGraph, roomArrows, roomOf } from '../support/import-graph';

/**
 * The house plan of src/: each folder is a room, rooms sit on floors, and an import only goes down (or
 * across, within a floor). A reader can then take any room with what it stands on and nothing above it.
 * The floors, bottom first: a new room gets a place here, and an import that climbs fails this test (move
 * the code to the room it belongs to, or pass the few values it needs instead of importing them).
 */
const floors: readonly (readonly string[])[] = [
  ['contracts'],
  ['domain'],
  ['threads'],
  ['workflows', 'workflow-scripts', 'tools', 'llm', 'http', 'dev'],
  ['sources', 'observability', 'temporal', 'workflow-runs'],
  ['settings'],
  ['activities'],
  ['api', 'worker'],
  ['cli'],
  ['cli.ts'],
];

/** The only modules at the top of src/: the CLI's entry (bin/errand.js and the CLI bundle start there). */
const looseModules = ['cli.ts'];

/**
 * Import cycles that are known and will go. Each found cycle must lie inside one of these, and each of these
 * must still be found (a cycle that is gone leaves this list).
 */
const knownCycles: readonly { files: readonly string[]; reason: string }[] = [];


const root = join(__dirname, '..', '..');
const graph = importGraph(root);
const floorOf = new Map(floors.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));

describe('the house plan of src/', () => {
  test('every room is on a floor', () => {
    const rooms = [...new Set(graph.files.map(roomOf))].sort();
    expect(rooms.length).toBeGreaterThan(10);
    expect(rooms.filter((room) => !floorOf.has(room))).toEqual([]);
  });

  test('no module lies loose at the top of src/ but the entries listed', () => {
    const loose = graph.files.filter((file) => file.split('/').length === 2).map((file) => file.slice('src/'.length));
    expect(loose.sort()).toEqual([...looseModules].sort());
    expect(looseModules.length).toBeLessThanOrEqual(3);
  });

  test('no import runs back up a floor', () => {
    const arrows = [...roomArrows(graph).values()];
    expect(arrows.length).toBeGreaterThan(20);
    const climbing = arrows.filter(({ from, to }) => (floorOf.get(to) ?? -1) > (floorOf.get(from) ?? -1)).map(({ from, to, example }) => `${from} → ${to} (${example})`);
    expect(climbing).toEqual([]);
  });

  test('no two rooms import each other, directly or round a circle', () => {
    const rooms = [...new Set(graph.files.map(roomOf))];
    const edges = new Map<string, string[]>();
    for (const { from, to } of roomArrows(graph).values()) edges.set(from, [...(edges.get(from) ?? []), to]);
    expect(importCycles(rooms, edges)).toEqual([]);
  });

  test('no module imports itself back through others (type-only imports and import() count)', () => {
    const cycles = importCycles(graph.files, graph.imports);
    const unknown = cycles.filter((cycle) => !knownCycles.some(({ files }) => cycle.every((file) => files.includes(file))));
    expect(unknown).toEqual([]);
    const gone = knownCycles.filter(({ files }) => !cycles.some((cycle) => cycle.some((file) => files.includes(file))));
    expect(gone.map(({ files, reason }) => `${files.join(' ↔ ')}: ${reason}`)).toEqual([]);
  });

  test('workflow and domain code name the owner of each limit it reads', () => {
    const onAll = graph.files.filter((file) => /^src\/(workflows|domain)\//.test(file) && (graph.imports.get(file) ?? []).includes('src/contracts/limits.ts'));
    // Workflow code imports its limits from their owners' files (src/contracts/limits/*.ts), not through the
    // file that re-exports them all, so its imports show which limits a replay sees.
    expect(onAll).toEqual([]);
  });

  test('the graph sees every kind of import (a re-export, a type-only import, an import())', () => {
    // contracts/subagent.ts re-exports the end statuses; api/temporal-client-provider.ts imports its SDK half with import().
    expect(graph.imports.get('src/contracts/subagent.ts')).toContain('src/contracts/subagent-state.ts');
    expect(graph.imports.get('src/api/temporal-client-provider.ts')).toContain('src/api/temporal-sdk-connect.ts');
    expect(graph.imports.get('src/contracts/subagent-result.ts')).toContain('src/contracts/subagent-state.ts');
  });

  test('a cycle in a small made-up graph is found, and a chain is not', () => {
    const edges = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']], ['e', ['e']]]);
    expect(importCycles(['a', 'b', 'c', 'd', 'e'], edges)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(importCycles(['x', 'y'], new Map([['x', ['y']]]))).toEqual([]);
  });
});
