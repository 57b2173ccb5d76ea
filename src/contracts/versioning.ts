/**
 * How errand's workflow types move between worker deployment versions (decision 0030). A one-shot subagent
 * is pinned: it finishes on the build that started it, whatever that build's code does. A session or a
 * continuable lives for days and waits between activations: it moves up to the current build at its next
 * workflow task, so a drained build is not kept alive by conversations (the code it moves to must replay
 * its history: `patched()`, checked by the replay test).
 */

/**
 * Memo key a continuable subagent is started with (by its parent, the API or the CLI): a subagent
 * workflow cannot read its input before it declares its behaviour, but it can read its memo.
 */
export const versioningMemoKey = 'errandVersioning';

/** The memo value of a subagent that moves up (a continuable). */
export const movesUpMemoValue = 'auto-upgrade';

/** The memo a subagent workflow with this input is started with ({} for a one-shot, pinned subagent). */
export function versioningMemo(input: { continuable?: boolean }): Record<string, string> {
  return input.continuable === true ? { [versioningMemoKey]: movesUpMemoValue } : {};
}
