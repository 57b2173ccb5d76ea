import { CancellationScope, setCurrentDetails, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import { viewsUpsertIntervalMs } from '../contracts/limits';
import { searchAttributes } from '../contracts/search-attributes';
import type { Agent } from './agent';

/**
 * The views that show an agent outside the workflow: its search attributes (listings, the Web UI's
 * columns) and the Web UI's current details. Kept apart from {@link Agent} because how often they are
 * written is a cost decision of its own (each search-attribute upsert is a history event).
 */
export class AgentViews {
  private lastSearchAttributes = '';
  /** Workflow time of the last search-attribute upsert. */
  private lastUpsertAt = Number.NEGATIVE_INFINITY;
  /** A timer that writes search attributes held back by the interval is running. */
  private upsertDeferred = false;
  private lastDetails = '';
  private dirty = false;

  constructor(private readonly agent: Agent) {}

  /** Marks the views as changed; {@link flush} writes them. */
  markDirty(): void {
    this.dirty = true;
  }

  /**
   * Writes the views if they changed. The current details cost no history and are written at once. Search
   * attributes (a history event and a visibility write each) are written at most once per
   * `viewsUpsertIntervalMs`: a change within the interval is written by a timer when it ends, so the Web
   * UI and listings are never more than that behind, and a run of fast turns costs about one upsert per
   * second instead of one per turn. `force` writes them now (the end of the workflow).
   */
  flush(force = false): void {
    if (!this.dirty && !force) return;
    this.dirty = false;
    const agent = this.agent;
    const attributes = `${agent.state}|${agent.turns}`;
    if (attributes !== this.lastSearchAttributes) {
      const now = Date.now();
      if (force || now - this.lastUpsertAt >= viewsUpsertIntervalMs) {
        this.lastSearchAttributes = attributes;
        this.lastUpsertAt = now;
        upsertSearchAttributes([
          { key: searchAttributes.status, value: agent.state },
          { key: searchAttributes.turns, value: agent.turns },
        ]);
      } else {
        this.deferUpsert(this.lastUpsertAt + viewsUpsertIntervalMs - now);
      }
    }
    const details = [
      `**${agent.state}** · turn ${agent.turnsThisRun} of ${agent.currentLimit} (total ${agent.turns}) · ${agent.toolCalls} tool calls`,
      agent.lastToolCall ? `last tool: \`${agent.lastToolCall.name}\` (turn ${agent.lastToolCall.turn})` : 'no tool calls yet',
      `idle since ${new Date(agent.lastActivityAt).toISOString()}`,
      agent.context ? `context compacted ${agent.context.compactions} time(s)` : '',
      agent.retryView ? `checks: attempt ${agent.retryView.attempt} of ${agent.retryView.attempts}, ${agent.retryView.state}` : '',
      agent.registry.tasks.length > 0 ? `tasks: ${agent.registry.tasks.map((task) => `${task.taskId} ${task.state}`).join(', ')}` : '',
    ].filter(Boolean).join('\n');
    if (details !== this.lastDetails) {
      this.lastDetails = details;
      setCurrentDetails(details);
    }
  }

  /** Writes the search attributes when the interval has passed (one timer at a time; not cancelled with a run). */
  private deferUpsert(delayMs: number): void {
    if (this.upsertDeferred) return;
    this.upsertDeferred = true;
    void CancellationScope.nonCancellable(() => sleep(Math.max(1, delayMs))).then(() => {
      this.upsertDeferred = false;
      this.dirty = true;
      this.flush();
    }).catch(() => undefined); // the workflow ended or was evicted meanwhile
  }
}
