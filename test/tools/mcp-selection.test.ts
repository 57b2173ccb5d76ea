import { describe, expect, it } from 'vitest';
import { intersectAllowLists, selectTools, type ToolSelectionInput } from '../../src/tools/tool-selection';
import type { RecipeExtension } from '../../src/contracts/recipe-schema';
import { recipeServerFromExtension, type RecipeServer } from '../../src/tools/mcp-config';

const parent = { toolsets: ['developer', 'github', 'search'] };
const base: ToolSelectionInput = { parent, operator: { allowRecipeServers: false } };
const stdioExtension: RecipeExtension = { type: 'stdio', name: 'jira', cmd: 'jira-mcp', args: [] };

function recipeServer(extension: RecipeExtension): RecipeServer {
  const converted = recipeServerFromExtension(extension);
  if (!converted.ok) throw new Error(converted.message);
  return converted.server;
}

describe('tool selection', () => {
  it('inherits the parent toolsets when nothing narrows', () => {
    expect(selectTools(base)).toEqual({ toolsets: ['developer', 'github', 'search'], recipeServers: [], toolPolicy: [], warnings: [] });
  });

  it('∩ the extensions argument: [] is none, a list a subset, unknown names reported', () => {
    expect(selectTools({ ...base, requested: [] }).toolsets).toEqual([]);
    const subset = selectTools({ ...base, requested: ['github', 'slack', 'developer'] });
    expect(subset.toolsets).toEqual(['developer', 'github']);
    expect(subset.warnings).toEqual(['extensions "slack" are not available (available: developer, github, search); the subagent runs without them']);
  });

  it('∩ the recipe extensions: builtin names pick parent toolsets; missing ones and unsupported types are reported', () => {
    const selection = selectTools({
      ...base,
      recipeExtensions: [
        { type: 'builtin', name: 'developer' },
        { type: 'builtin', name: 'memory' },
        { type: 'platform', name: 'summon' },
        { type: 'frontend', name: 'ui', tools: [] },
      ],
    });
    expect(selection.toolsets).toEqual(['developer']);
    expect(selection.warnings).toEqual([
      'the recipe\'s extension "ui" has type frontend, which errand does not run; the subagent runs without it',
      'the recipe\'s extensions "memory" are not available here; the subagent runs without them',
    ]);
    expect(selectTools({ ...base, recipeExtensions: [] }).toolsets).toEqual([]);
    expect(selectTools({ ...base, recipeExtensions: null }).toolsets).toEqual(['developer', 'github', 'search']);
  });

  it('recipe-declared servers join only when the operator allows them', () => {
    const refused = selectTools({ ...base, recipeExtensions: [{ type: 'builtin', name: 'developer' }, stdioExtension] });
    expect(refused.toolsets).toEqual(['developer']);
    expect(refused.recipeServers).toEqual([]);
    expect(refused.warnings).toEqual(['the recipe\'s server "jira" is not started: the operator does not allow recipe-declared MCP servers']);

    // Not allowed, but the operator has a server of that name: it is used instead.
    const substituted = selectTools({ ...base, recipeExtensions: [{ type: 'stdio', name: 'github', cmd: 'gh-mcp', args: [] }] });
    expect(substituted.toolsets).toEqual(['github']);
    expect(substituted.warnings[0]).toContain('the configured toolset of that name is used instead');

    const allowed = selectTools({ ...base, operator: { allowRecipeServers: true }, recipeExtensions: [{ type: 'builtin', name: 'developer' }, stdioExtension] });
    const jira = recipeServer(stdioExtension);
    expect(allowed.toolsets).toEqual(['developer', jira.config.name]);
    expect(allowed.recipeServers).toEqual([jira]);
    expect(allowed.warnings).toEqual([]);

    // The extensions argument narrows recipe servers too, by their declared name.
    const onlyJira = selectTools({ ...base, operator: { allowRecipeServers: true }, recipeExtensions: [{ type: 'builtin', name: 'developer' }, stdioExtension], requested: ['jira'] });
    expect(onlyJira.toolsets).toEqual([jira.config.name]);
    expect(onlyJira.warnings).toEqual([]);
    const none = selectTools({ ...base, operator: { allowRecipeServers: true }, recipeExtensions: [stdioExtension], requested: ['developer'] });
    expect(none.toolsets).toEqual([]);
    expect(none.recipeServers).toEqual([]);
  });

  it('the recipe\'s available_tools restrict its toolsets', () => {
    const selection = selectTools({ ...base, recipeExtensions: [{ type: 'builtin', name: 'developer', available_tools: ['read_file'] }, { type: 'builtin', name: 'github' }] });
    expect(selection.toolsets).toEqual(['developer', 'github']);
    expect(selection.toolFilter).toEqual({ allow: ['developer__read_file', 'github'] });
  });

  it('∩ the agent tools − disallowedTools, with Claude names mapped and unknown entries reported', () => {
    const selection = selectTools({ ...base, agent: { tools: ['Read', 'Grep', 'mcp__github__create_issue', 'WebFetch', 'slack__post'], disallowedTools: ['Bash', 'mcp__nowhere'] } });
    expect(selection.toolFilter).toEqual({
      allow: ['developer__read_file', 'developer__search_text', 'github__create_issue'],
      deny: ['developer__run_command'],
    });
    // search is reachable by no allow entry: the subagent does not have it, and its prompt will not list it.
    expect(selection.toolsets).toEqual(['developer', 'github']);
    expect(selection.warnings).toEqual([
      'the agent\'s tools entry "WebFetch" matches no tool here; it was ignored',
      'the agent\'s tools entry "slack__post" names toolset "slack", which this delegation does not have; it was ignored',
      'the agent\'s disallowedTools entry "mcp__nowhere" names an MCP server this delegation does not have; it was ignored',
    ]);
    const whole = selectTools({ ...base, agent: { disallowedTools: ['search'] } });
    expect(whole.toolsets).toEqual(['developer', 'github']);
    expect(whole.toolFilter).toEqual({ deny: ['search'] });
  });

  it('agent entries reach recipe servers by their declared name', () => {
    const jira = recipeServer(stdioExtension);
    const selection = selectTools({ ...base, operator: { allowRecipeServers: true }, recipeExtensions: [stdioExtension], agent: { tools: ['mcp__jira__create_ticket'] } });
    expect(selection.toolFilter).toEqual({ allow: [`${jira.config.name}__create_ticket`] });
    expect(selection.toolsets).toEqual([jira.config.name]);
  });

  it('stays within the parent\'s own filter and carries its recipe servers and policy down', () => {
    const jira = recipeServer(stdioExtension);
    const selection = selectTools({
      ...base,
      parent: { toolsets: ['developer', jira.config.name], toolFilter: { allow: ['developer__*_file', jira.config.name], deny: ['developer__write_file'] }, recipeServers: [jira], toolPolicy: [{ default: 'ask' }] },
      requested: ['developer', 'jira'],
      agent: { tools: ['developer', 'Bash'] },
      requestToolPolicy: { rules: { developer__read_file: 'deny' } },
      recipeToolPolicy: { rules: { developer: 'bogus' } },
    });
    expect(selection.toolsets).toEqual(['developer']);
    expect(selection.toolFilter).toEqual({ allow: ['developer__*_file'], deny: ['developer__write_file'] });
    expect(selection.recipeServers).toEqual([]);
    expect(selection.toolPolicy).toEqual([{ default: 'ask' }, { rules: { developer__read_file: 'deny' } }]);
    expect(selection.warnings).toHaveLength(1);
    expect(selection.warnings[0]).toMatch(/^the recipe's tool_policy is invalid and was ignored: rules.developer: /);

    const inherited = selectTools({ ...base, parent: { toolsets: ['developer', jira.config.name], recipeServers: [jira] } });
    expect(inherited.recipeServers).toEqual([jira]);
  });

  it('intersects allow lists without ever widening', () => {
    expect(intersectAllowLists(undefined, ['a'])).toEqual(['a']);
    expect(intersectAllowLists(['developer'], ['developer__read_file'])).toEqual(['developer__read_file']);
    expect(intersectAllowLists(['developer__read_file'], ['developer'])).toEqual(['developer__read_file']);
    expect(intersectAllowLists(['developer__*'], ['developer'])).toEqual(['developer', 'developer__*']);
    expect(intersectAllowLists(['developer__*_file'], ['developer__*'])).toEqual(['developer__*_file']);
    expect(intersectAllowLists(['github'], ['developer'])).toEqual([]);
    expect(intersectAllowLists(['dev*'], ['*file'])).toEqual([]);
  });
});
