import { describe, expect, it } from 'vitest';
import { parseAgentHooks } from '../../src/contracts/agent-hooks';
import { hookToolNames, matcherMatches, orchestrationToolsMatched } from '../../src/activities/agent-hook-matching';
import { httpHookRefusal } from '../../src/activities/agent-hook-runner';

/** Reading an agent file's `hooks` (decision 0032): what errand runs, what it reports, what it refuses. */
describe('agent-file hooks: parsing', () => {
  it('reads command hooks by event, with matchers, default and capped time limits; Stop and SubagentStop are one event', () => {
    const parsed = parseAgentHooks({
      SubagentStart: [{ hooks: [{ type: 'command', command: 'echo context' }] }],
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh', timeout: 30 }] }],
      PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ command: 'npm run lint', timeout: '5000' }] }],
      Stop: [{ hooks: [{ type: 'command', command: './stop.sh' }] }],
      SubagentStop: [{ matcher: '*', hooks: [{ type: 'command', command: './stop2.sh' }] }],
    }, 'a.md');
    expect(parsed.errors).toEqual([]);
    expect(parsed.hooks).toEqual({
      start: [{ hooks: [{ command: 'echo context', timeoutSeconds: 60 }] }],
      preToolUse: [{ matcher: 'Bash', hooks: [{ command: './check.sh', timeoutSeconds: 30 }] }],
      postToolUse: [{ matcher: 'Edit|Write', hooks: [{ command: 'npm run lint', timeoutSeconds: 600 }] }],
      stop: [{ hooks: [{ command: './stop.sh', timeoutSeconds: 60 }] }, { hooks: [{ command: './stop2.sh', timeoutSeconds: 60 }] }],
    });
    expect(parsed.warnings).toEqual(['a.md: hooks.PostToolUse[0].hooks[0].timeout: 5000 s is more than errand allows for a hook; it runs with 600 s']);
  });

  it('reports events that never happen to a subagent and hook types it cannot run; refuses a PreToolUse hook it cannot run', () => {
    const reported = parseAgentHooks({
      UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'x' }] }],
      Whatever: [],
      PostToolUse: [{ hooks: [{ type: 'agent', prompt: 'check it' }] }],
    }, 'a.md');
    expect(reported.errors).toEqual([]);
    expect(reported.hooks).toBeUndefined();
    expect(reported.warnings).toEqual([
      'a.md: hooks.UserPromptSubmit: not run by errand: the event does not happen to a delegated subagent (errand runs SubagentStart, PreToolUse, PostToolUse, Stop, SubagentStop)',
      'a.md: hooks.Whatever: unknown hook event, ignored (errand runs SubagentStart, PreToolUse, PostToolUse, Stop, SubagentStop)',
      'a.md: hooks.PostToolUse[0].hooks[0].type: "agent" hooks are not run by errand (only command and http hooks are); this hook is skipped',
    ]);
    const refused = parseAgentHooks({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'is this safe?' }] }] }, 'a.md');
    expect(refused.errors).toEqual(['a.md: hooks.PreToolUse[0].hooks[0].type: "prompt" hooks are not run by errand (only command and http hooks are); a PreToolUse hook may be there to block calls, so the agent does not run without it']);
  });

  it('names the field and what would be valid', () => {
    expect(parseAgentHooks('echo hi', 'a.md').errors).toEqual(['a.md: hooks: expected a map of event names (SubagentStart, PreToolUse, PostToolUse, Stop, SubagentStop) to lists of matcher groups']);
    expect(parseAgentHooks({ PreToolUse: { matcher: 'Bash' } }, 'a.md').errors).toEqual(['a.md: hooks.PreToolUse: expected a list of matcher groups ({ matcher, hooks: [{ type: command, command }] })']);
    expect(parseAgentHooks({ PreToolUse: [{ matcher: '(', hooks: [] }] }, 'a.md').errors[0]).toMatch(/^a\.md: hooks\.PreToolUse\[0\]\.matcher: not a valid regular expression: /);
    expect(parseAgentHooks({ PreToolUse: [{ hooks: [{ type: 'command', command: ' ' }] }] }, 'a.md').errors).toEqual(['a.md: hooks.PreToolUse[0].hooks[0].command: expected a non-empty shell command']);
    expect(parseAgentHooks({ Stop: [{ hooks: [{ command: 'x', timeout: 0 }] }] }, 'a.md').errors).toEqual(['a.md: hooks.Stop[0].hooks[0].timeout: expected a whole number of seconds from 1 to 600']);
  });

  it('reads http hooks: url, headers with variables, allowedEnvVars; names what is wrong', () => {
    const parsed = parseAgentHooks({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'http', url: 'https://hooks.example.com/pre', headers: { Authorization: 'Bearer $HOOK_TOKEN', 'X-Team': '${TEAM}' }, allowedEnvVars: ['HOOK_TOKEN'], timeout: 5 }] }],
    }, 'a.md');
    expect(parsed.errors).toEqual([]);
    expect(parsed.hooks).toEqual({ preToolUse: [{ matcher: 'Bash', hooks: [{ type: 'http', url: 'https://hooks.example.com/pre', headers: { Authorization: 'Bearer $HOOK_TOKEN', 'X-Team': '${TEAM}' }, allowedEnvVars: ['HOOK_TOKEN'], timeoutSeconds: 5 }] }] });
    expect(parsed.warnings).toEqual(['a.md: hooks.PreToolUse[0].hooks[0].headers.X-Team: uses $TEAM, which allowedEnvVars does not list: it is sent empty']);
    const errors = (hook: Record<string, unknown>): string[] => parseAgentHooks({ PostToolUse: [{ hooks: [hook] }] }, 'a.md').errors;
    expect(errors({ type: 'http' })).toEqual(['a.md: hooks.PostToolUse[0].hooks[0].url: expected the http(s) URL the hook POSTs the event to']);
    expect(errors({ type: 'http', url: 'not a url' })).toEqual(['a.md: hooks.PostToolUse[0].hooks[0].url: "not a url" is not a URL; expected an http(s) URL such as https://hooks.example.com/pre-tool-use']);
    expect(errors({ type: 'http', url: 'file:///etc/passwd' })).toEqual(['a.md: hooks.PostToolUse[0].hooks[0].url: "file:///etc/passwd" is not an http(s) URL']);
    expect(errors({ type: 'http', url: 'https://u:p@hooks.example.com/' })).toEqual(['a.md: hooks.PostToolUse[0].hooks[0].url: a URL with a user name or password is not accepted; send a credential in a header from allowedEnvVars']);
    expect(errors({ type: 'http', url: 'https://hooks.example.com/', allowedEnvVars: ['$TOKEN'] })).toEqual(['a.md: hooks.PostToolUse[0].hooks[0].allowedEnvVars: expected a list of environment variable names (e.g. [HOOK_TOKEN]), without "$"']);
    expect(errors({ type: 'http', url: 'https://hooks.example.com/', headers: { 'Bad Header': 'x' } })).toEqual(['a.md: hooks.PostToolUse[0].hooks[0].headers: "Bad Header" is not a header name']);
  });
});

describe('agent-file hooks: the URLs an http hook may reach', () => {
  const deps = (hookUrls: string[]) => ({ commands: { hookUrls } });
  it('allows only URLs under a prefix the operator lists, by origin and whole path segments', () => {
    expect(httpHookRefusal({ url: 'https://hooks.example.com/errand/pre' }, deps([]))).toBe('this worker allows no http hooks (the operator lists the URLs they may reach in ERRAND_HOOK_URLS)');
    const allowed = deps(['https://hooks.example.com/errand', 'http://127.0.0.1:8080/']);
    expect(httpHookRefusal({ url: 'https://hooks.example.com/errand' }, allowed)).toBeUndefined();
    expect(httpHookRefusal({ url: 'https://hooks.example.com/errand/pre?x=1' }, allowed)).toBeUndefined();
    expect(httpHookRefusal({ url: 'http://127.0.0.1:8080/anything' }, allowed)).toBeUndefined();
    for (const url of ['https://hooks.example.com/errand-other', 'http://hooks.example.com/errand/pre', 'https://hooks.example.com.evil.test/errand', 'http://127.0.0.1:8081/', 'http://169.254.169.254/latest/meta-data/']) {
      expect(httpHookRefusal({ url }, allowed)).toBe('its URL is not under one the operator allows in ERRAND_HOOK_URLS');
    }
  });
});

describe('agent-file hooks: matching tool names', () => {
  it('knows errand tools by their Claude Code names, MCP tools as mcp__<server>__<tool>, and both by errand names', () => {
    expect(hookToolNames('developer__run_command')).toEqual(['Bash', 'developer__run_command']);
    expect(hookToolNames('developer__write_file')).toEqual(['Write', 'Edit', 'MultiEdit', 'developer__write_file']);
    expect(hookToolNames('github__create_issue')).toEqual(['mcp__github__create_issue', 'github__create_issue']);
    expect(matcherMatches('Bash', hookToolNames('developer__run_command'))).toBe(true);
    expect(matcherMatches('Edit|Write', hookToolNames('developer__write_file'))).toBe(true);
    expect(matcherMatches('Edit|Write', hookToolNames('developer__read_file'))).toBe(false);
    expect(matcherMatches('mcp__github__.*', hookToolNames('github__create_issue'))).toBe(true);
    // Anchored at both ends, as Claude Code matches a plain name exactly.
    expect(matcherMatches('Bas', hookToolNames('developer__run_command'))).toBe(false);
    expect(matcherMatches(undefined, hookToolNames('developer__run_command'))).toBe(true);
    // RE2: a pattern that backtracks exponentially in a JavaScript RegExp matches in linear time.
    expect(matcherMatches('(a+)+$', [`${'a'.repeat(60)}!`])).toBe(false);
  });

  it('knows the orchestration tools by Claude Code\'s names where it has them (delegate = Agent or Task, send_message = SendMessage), never as MCP tools', () => {
    expect(hookToolNames('delegate')).toEqual(['Agent', 'Task', 'delegate']);
    expect(hookToolNames('send_message')).toEqual(['SendMessage', 'send_message']);
    expect(hookToolNames('load')).toEqual(['load']);
    expect(hookToolNames('list_subagent_models')).toEqual(['list_subagent_models']);
    expect(matcherMatches('Task', hookToolNames('delegate'))).toBe(true);
    expect(matcherMatches('Agent', hookToolNames('delegate'))).toBe(true);
    expect(matcherMatches('mcp__.*', hookToolNames('load'))).toBe(false);
  });

  it('finds, where the agent file is read, which orchestration tools each tool event\'s matchers match (the workflow cannot run RE2)', () => {
    const parsed = parseAgentHooks({
      PreToolUse: [{ matcher: 'Task|Agent', hooks: [{ type: 'command', command: 'true' }] }, { matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }],
      PostToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }],
    }, 'agents/lead.md');
    expect(parsed.errors).toEqual([]);
    expect(orchestrationToolsMatched(parsed.hooks ?? {})).toEqual({
      preToolUse: ['delegate'],
      // A group without a matcher runs for every tool, the orchestration tools included.
      postToolUse: ['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models', 'approve'],
    });
    const developerOnly = parseAgentHooks({ PreToolUse: [{ matcher: 'Bash|Edit|Write|mcp__.*', hooks: [{ type: 'command', command: 'true' }] }] }, 'agents/dev.md');
    expect(orchestrationToolsMatched(developerOnly.hooks ?? {})).toBeUndefined();
  });
});
