/**
 * `errand <command> --help`: each command's arguments and options. Plain text, loaded only for help; a
 * test checks that every option a command parses is listed here.
 */
export const commandHelp: Record<string, string> = {
  dev: `usage: errand dev [--port 8787] [--host 127.0.0.1] [--temporal-port 7233] [--ui-port 8233] [--temporal-http-port 7243] [--headless]

Runs the whole local stack: a Temporal dev server (state under the data directory) with its Web UI, a
worker and the HTTP API. Without a configured provider it runs the demo model. --host other than a
loopback address needs API keys (ERRAND_API_KEYS). --headless starts no Web UI.`,
  worker: `usage: errand worker [--demo]

Runs a worker on ERRAND_TASK_QUEUE. --demo serves the demo model when no provider is configured.`,
  api: `usage: errand api

Runs the HTTP API (ERRAND_API_PORT, ERRAND_API_HOST); needs ERRAND_API_KEYS or ERRAND_API_AUTH=off on loopback.`,
  delegate: `usage: errand delegate ["task..."] [options]

Starts a subagent and waits for it with a live progress line and the text it writes (Ctrl-C cancels it),
or returns at once with --async. Give the task, a --source, or both.

  -s, --source <name>          a recipe, subrecipe or agent file (see errand sources)
  -p, --param <key=value>      a recipe parameter (repeatable)
  -e, --extension <name>       a toolset for the subagent (repeatable); --no-extensions for none
      --provider <name>        provider of the model (see errand models)
  -m, --model <id>             model id
      --temperature <n>        sampling temperature
      --reasoning-effort <e>   an effort the model takes (errand models <provider> lists them)
      --persona <text>         who the subagent is, added to its system prompt
      --max-turns <n>          turn budget (at most ERRAND_SUBAGENT_MAX_TURNS)
      --max-output-tokens <n>  output-token limit of each model call
      --token-budget <n>       total tokens the delegation may use
      --time-budget <secs>     wall-clock seconds it may run (at most ERRAND_MAX_TIME_BUDGET_SECS)
      --cost-budget-usd <usd>  US dollars its model calls may cost (at most ERRAND_MAX_COST_BUDGET_USD)
      --context <text>         reference material; --context-file <file> reads it from a file
  -C, --working-dir <dir>      working directory, relative to the working root
      --continuable            keep it alive for errand send: waits for its first answer, prints it, and leaves it running
      --output-schema <file>   a JSON Schema (type object) the answer must match; printed as JSON
      --isolation worktree     run in a git worktree of its own
  -d, --description <text>     a label for listings and the Web UI
      --idempotency-key <key>  a retried start returns the same delegation
      --async                  print the id and return
      --json                   print JSON (with --continuable: event lines, a started event with the id first)`,
  workflow: `usage: errand workflow <subcommand> ...

  errand workflow run <file|name> [options]   run a workflow script (a file, or .claude/workflows/<name>.js)
  errand workflow show <id> [-f, --follow]    the run's view by label (waiting, running, done, failed)
  errand workflow pause <id>                  no new agent starts; running ones finish
  errand workflow resume <id> [--script file] a paused run goes on; an ended run starts again from its journal
  errand workflow cancel <id> [-r, --reason text]
  errand workflow restart <id> <agent key>    the agent runs again

Options of run:
  -a, --args JSON           the value the script reads as args
  --dry-run                 print the projection (agents, tokens, cost) and start nothing
  --async                   print the run's id and return at once (otherwise: follow it to its end)
  --token-budget n          tokens every agent of the run may use together
  --time-budget seconds     how long the whole run may take
  --cost-budget-usd x       US dollars the run may cost; a projection over it refuses the start
  --concurrency n           agents at once (at most 16)
  --max-agents n            agent() calls the run may make (at most 1000)
  --idempotency-key key     a retried start returns the same run
  --json                    answers as JSON`,
  peek: `usage: errand peek <id> [--follow] [--json]

Shows a delegation's state, turns, last tool call and the text its model is writing. -f, --follow keeps
watching until it ends (with --json: one event per line).`,
  result: `usage: errand result <id> [--wait 30s] [--json]

Prints a delegation's result; exit 3 while it still runs.`,
  cancel: `usage: errand cancel <id> [--reason text] [--json]

Cancels a delegation and everything under it; the text written so far is kept as its partial output.`,
  send: `usage: errand send <id> "message..." [--idempotency-key key] [--json]

Sends a message to a continuable delegation (accepted durably before this returns).`,
  list: `usage: errand list [--status s] [--source s] [--parent id] [--page-size n] [--page-token t] [--json]

Lists delegations, newest first.`,
  sources: `usage: errand sources [name] [--refresh] [--raw] [--json]

Lists the recipes and agents delegate can use, or shows one (--raw: the file as stored; --refresh: sync git and S3 stores first).`,
  models: `usage: errand models [provider] [--json]

Lists the providers and models a delegation may use, with context window, output limit and efforts.`,
  recipes: `usage: errand recipes check <file or folder>... [--json]

Validates recipe and agent files; every problem names the file and the field.`,
  sessions: `usage: errand sessions start [message...] [--label l] [--instructions text] [--max-depth n]
       errand sessions send <id> <message...>
       errand sessions show <id>
       errand sessions cancel <id> [--reason r]
(every form takes --json)`,
  usage: `usage: errand usage <delegation or session id> [--json]

Shows the delegation (or session) and every task below it: state, turns, its own tokens and cost, and
the total with its tasks'. Costs come from the prices of the model entries (ERRAND_PROVIDERS); calls to a
model without prices are counted as unpriced.`,
  approvals: `usage: errand approvals [list] | approve <approval id> | deny <approval id> [--reason r] [--json]

Tool calls under an ask policy wait for a person; approve or deny them.`,
  mcp: `usage: errand mcp [--session <id>] [--label l]

Serves load, delegate, send_message and list_subagent_models to an MCP client over stdio (stdout is the
protocol; messages for a person go to stderr). Each run is one durable session; --session (or
ERRAND_MCP_SESSION) reconnects to an earlier one and its tasks. See docs/mcp.md.`,
  'api-key': `usage: errand api-key <tenant>

Prints a new API key and the ERRAND_API_KEYS entry (its SHA-256) to configure for the tenant.`,
};
