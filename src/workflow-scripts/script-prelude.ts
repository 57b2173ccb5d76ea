/**
 * The JavaScript that runs in the sandbox before a workflow script: the script API of Claude Code's
 * dynamic workflows (`agent`, `parallel`, `pipeline`, `phase`, `log`, `budget`, `args`), built on one host
 * function that takes and returns JSON text, plus the lock on the clock and randomness. The host function
 * is taken off the global object before the script runs; only these closures hold it.
 */
export const preludeFileName = 'errand-prelude.js';

/** Names of the host function and the hook the wrapped script settles through. */
export const hostFunctionName = '__errandHost';
export const settleHookName = '__errandSettle';

export const scriptPrelude = String.raw`
(function (host) {
  'use strict';
  // The script may replace any global; the API keeps the originals it was built with.
  const { parse, stringify } = JSON;
  const toJson = (value) => stringify.call(JSON, value);
  const fromJson = (text) => parse.call(JSON, text);
  const SandboxPromise = Promise;
  const resolved = SandboxPromise.resolve.bind(SandboxPromise);
  const rejected = SandboxPromise.reject.bind(SandboxPromise);
  const all = SandboxPromise.all.bind(SandboxPromise);
  const call = (kind, payload) => fromJson(host(kind, toJson(payload === undefined ? null : payload)));
  const scriptLine = () => {
    const frames = String(new Error().stack || '').split('\n');
    for (const frame of frames) {
      const found = /workflow\.js:(\d+)/.exec(frame);
      if (found) return Number(found[1]);
    }
    return null;
  };
  // A construct errand does not support ends the run naming it: the host records it, so a catch in the
  // script (or parallel's null for a failed thunk) cannot make it pass unnoticed.
  const unsupported = (what) => {
    call('unsupported', { message: what, line: scriptLine() });
    const error = new Error(what);
    error.name = 'UnsupportedConstruct';
    return error;
  };
  const setup = call('setup', null);
  const knownOptions = ['label', 'phase', 'schema', 'model', 'effort', 'agentType', 'agent', 'isolation'];
  let currentPhase = null;
  let agentCalls = 0;
  let spentTokens = 0;

  const startAgent = (prompt, options) => {
    if (typeof prompt !== 'string') throw new TypeError('agent(prompt, options): the prompt must be a string');
    if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
      throw new TypeError('agent(prompt, options): the options must be an object');
    }
    const given = options === undefined ? {} : options;
    for (const name of Object.keys(given)) {
      if (!knownOptions.includes(name)) throw unsupported("agent() option '" + name + "' is not supported by errand (it takes " + knownOptions.join(', ') + ')');
    }
    if (given.agent !== undefined && given.agentType !== undefined) {
      throw new TypeError('agent(prompt, options): give agent or agentType, not both');
    }
    agentCalls += 1;
    if (agentCalls > setup.agents) {
      throw new Error('a workflow run may make at most ' + setup.agents + ' agent() calls');
    }
    let plain;
    try {
      plain = fromJson(toJson(given));
    } catch (error) {
      throw new TypeError('agent(prompt, options): the options must be JSON (' + error.message + ')');
    }
    const phase = typeof given.phase === 'string' ? given.phase : currentPhase;
    const answer = call('agent', { prompt: prompt, options: plain, phase: phase });
    if (answer.state === 'done') {
      spentTokens += answer.tokens;
      return resolved(answer.result);
    }
    if (answer.state === 'failed') {
      const error = new Error(answer.message);
      error.name = 'AgentFailed';
      error.type = answer.type;
      return rejected(error);
    }
    // Not finished yet: the round ends when nothing else can run, and the host reports the call.
    return new SandboxPromise(() => {});
  };
  const agent = (prompt, options) => {
    try {
      return startAgent(prompt, options);
    } catch (error) {
      return rejected(error);
    }
  };
  const checkItems = (items, name) => {
    if (!Array.isArray(items)) throw new TypeError(name + '() takes an array');
    if (items.length > setup.items) {
      throw new RangeError(name + '() takes at most ' + setup.items + ' items, got ' + items.length);
    }
  };
  // parallel is a barrier that never rejects: a task that throws (or an agent that fails) becomes null.
  const parallel = async (tasks) => {
    checkItems(tasks, 'parallel');
    return all(tasks.map((task) => {
      try {
        return resolved(typeof task === 'function' ? task() : task).catch(() => null);
      } catch (error) {
        return null;
      }
    }));
  };
  // pipeline runs each item through every stage with no barrier between stages; a stage that throws
  // drops that item to null and skips its later stages.
  const pipeline = async (items, ...stages) => {
    checkItems(items, 'pipeline');
    if (stages.length === 0 || stages.some((stage) => typeof stage !== 'function')) {
      throw new TypeError('pipeline(items, ...stages): every stage must be a function');
    }
    return all(items.map(async (item, index) => {
      try {
        let value = item;
        for (const stage of stages) value = await stage(value, item, index);
        return value;
      } catch (error) {
        return null;
      }
    }));
  };
  const phase = (title) => {
    currentPhase = String(title);
    call('phase', currentPhase);
  };
  const log = (...parts) => {
    call('log', parts.map((part) => (typeof part === 'string' ? part : toJson(part))).join(' '));
  };
  const budget = Object.freeze({
    total: setup.budgetTokens,
    spent: () => spentTokens,
    remaining: () => (setup.budgetTokens === null ? Infinity : Math.max(0, setup.budgetTokens - spentTokens)),
  });
  const workflow = () => {
    throw unsupported('workflow() (a workflow inside a workflow) is not supported by errand');
  };

  // No clock and no randomness, as in Claude Code: a script that reads them would not run the same again.
  const RealDate = Date;
  const refuse = (what) => () => {
    throw new Error(what + ' is not available in a workflow script: it would not give the same value when the script runs again');
  };
  function SandboxDate(...parts) {
    if (!new.target) refuse('Date()')();
    if (parts.length === 0) refuse('new Date() without an argument')();
    return Reflect.construct(RealDate, parts, new.target);
  }
  SandboxDate.prototype = RealDate.prototype;
  Object.defineProperty(RealDate.prototype, 'constructor', { value: SandboxDate });
  SandboxDate.UTC = RealDate.UTC;
  SandboxDate.parse = RealDate.parse;
  SandboxDate.now = refuse('Date.now()');
  Math.random = refuse('Math.random()');

  const define = (name, value) => Object.defineProperty(globalThis, name, { value: value, writable: true, configurable: true });
  define('Date', SandboxDate);
  define('agent', agent);
  define('parallel', parallel);
  define('pipeline', pipeline);
  define('phase', phase);
  define('log', log);
  define('budget', budget);
  define('workflow', workflow);
  define('args', setup.args);

  let settled = false;
  define('${settleHookName}', (main) => {
    if (settled) return undefined;
    settled = true;
    main.then(
      (value) => {
        let text;
        try {
          text = toJson(value === undefined ? null : value);
        } catch (error) {
          call('failed', { name: 'TypeError', message: 'the script returned a value that is not JSON: ' + error.message, line: null });
          return;
        }
        call('done', text === undefined ? 'null' : text);
      },
      (error) => {
        const isError = error !== null && typeof error === 'object';
        call('failed', {
          name: isError && typeof error.name === 'string' ? error.name : 'Error',
          message: isError && typeof error.message === 'string' ? error.message : String(error),
          stack: isError && typeof error.stack === 'string' ? error.stack : '',
        });
      },
    );
    return main;
  });
})(globalThis['${hostFunctionName}']);
delete globalThis['${hostFunctionName}'];
`;
