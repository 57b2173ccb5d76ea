import { permissionModes, type PermissionMode } from '../contracts/agent-definition';
import type { ToolPolicyNarrowing } from './tool-policy';

/**
 * Claude Code's permission modes (an agent file's `permissionMode`) as errand tool-policy layers. Pure.
 *
 * errand's operator policy plays the part of Claude Code's permission rules: its explicit rules always
 * stand, and a mode changes only what happens to a tool the operator's rules do not name.
 * - `default` (and `manual`, Claude Code's newer name for it): the operator's policy, unchanged;
 * - `auto`: the operator's policy, with every `ask` decided by a person. Claude Code's `auto` has a
 *   classifier decide its prompts; errand has none, and the only safe stand-in is the person the
 *   operator's policy already asks, so the delegating model may not decide even where the operator's
 *   `approvers` lets it (`approvers: 'human'` on the planned run);
 * - `plan`: read-only tools only (reading, listing and searching files), everything else denied;
 * - `acceptEdits`: file writes run without asking where the operator asks only by its default;
 * - `dontAsk`: whatever would ask is denied instead (nobody is there to answer);
 * - `bypassPermissions`: nothing the operator's default would ask about asks — only where the operator
 *   allows it (`ERRAND_ALLOW_BYPASS_PERMISSIONS`), otherwise planning fails with a clear message.
 */

export { permissionModes, type PermissionMode };

/** The developer tools that only read: what `plan` leaves. */
export const readOnlyDeveloperTools = ['developer__read_file', 'developer__list_directory', 'developer__search_text'] as const;

/** The developer tools that write files: what `acceptEdits` lets run without asking. */
export const fileWriteDeveloperTools = ['developer__write_file'] as const;

/** A mode's policy layer, who decides an `ask`, a note for the calling model, or why the mode may not be used here. */
export type PermissionModeLayer =
  | { ok: true; layer?: ToolPolicyNarrowing; approvers?: 'human'; warnings: string[] }
  | { ok: false; message: string };

/**
 * The tool-policy layer of a permission mode. `toolsets` are the delegation's toolsets (for the note on
 * what `plan` leaves out); `allowBypass` is the operator's setting.
 */
export function permissionModeLayer(mode: PermissionMode, options: { toolsets: readonly string[]; allowBypass: boolean; where: string }): PermissionModeLayer {
  switch (mode) {
    case 'default':
    case 'manual':
      return { ok: true, warnings: [] };
    case 'auto':
      return { ok: true, approvers: 'human', warnings: [] };
    case 'plan': {
      const others = options.toolsets.filter((name) => name !== 'developer');
      return {
        ok: true,
        layer: { default: 'deny', rules: Object.fromEntries(readOnlyDeveloperTools.map((name) => [name, 'allow'])) },
        warnings: others.length > 0
          ? [`${options.where}: permissionMode plan: only the read-only developer tools are offered; the tools of ${others.join(', ')} are not (errand cannot tell which MCP tools only read)`]
          : [],
      };
    }
    case 'acceptEdits':
      return { ok: true, layer: { allowOverDefaultAsk: [...fileWriteDeveloperTools] }, warnings: [] };
    case 'dontAsk':
      return { ok: true, layer: { askBecomes: 'deny' }, warnings: [] };
    case 'bypassPermissions':
      if (!options.allowBypass) {
        return {
          ok: false,
          message: `${options.where}: permissionMode bypassPermissions is not allowed here: the operator has not enabled it (ERRAND_ALLOW_BYPASS_PERMISSIONS=true). Use default, manual, auto, plan, acceptEdits or dontAsk, or ask the operator.`,
        };
      }
      return { ok: true, layer: { allowOverDefaultAsk: ['*'] }, warnings: [] };
  }
}
