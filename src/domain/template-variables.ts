import { type Expression } from './template-expression';
import { filterNames, testNames } from './template-filters';
import { type TemplateNode } from './template-parser';
import { forbiddenKeyReason } from './template-values';

/**
 * What a parsed template reads, found without rendering it: its free variables (names not bound by
 * `{% for %}` or `{% set %}`), and the problems it would hit whatever the values (a call other than
 * `range()`, a property such as `constructor` or `__proto__`, an unknown filter or test). Recipe
 * validation (SEMANTICS §1) uses the variables; the problems refuse the recipe before anything renders.
 */

/** Free variables (sorted) and problems (each with its line) of a template. */
export interface TemplateAnalysis {
  variables: string[];
  problems: string[];
}

const knownFilters = new Set(filterNames());
const knownTests = new Set(testNames());

class Analyzer {
  readonly free = new Set<string>();
  readonly problems: string[] = [];

  constructor(private readonly globallyBound: ReadonlySet<string>) {}

  nodes(nodes: readonly TemplateNode[], bound: ReadonlySet<string>): void {
    for (const node of nodes) this.node(node, bound);
  }

  private node(node: TemplateNode, bound: ReadonlySet<string>): void {
    switch (node.kind) {
      case 'text':
        return;
      case 'output':
        this.expression(node.expression, bound, node.line);
        return;
      case 'set':
        this.expression(node.value, bound, node.line);
        return;
      case 'if':
        for (const branch of node.branches) {
          this.expression(branch.test, bound, node.line);
          this.nodes(branch.body, bound);
        }
        this.nodes(node.otherwise, bound);
        return;
      case 'for': {
        this.expression(node.iterable, bound, node.line);
        const inner = new Set([...bound, ...node.targets, 'loop']);
        if (node.filter) this.expression(node.filter, inner, node.line);
        this.nodes(node.body, inner);
        this.nodes(node.otherwise, bound);
        return;
      }
    }
  }

  private key(name: string, line: number): void {
    const reason = forbiddenKeyReason(name);
    if (reason) this.problems.push(`line ${line}: ${reason}`);
  }

  private expression(expression: Expression, bound: ReadonlySet<string>, line: number): void {
    const visit = (child: Expression) => this.expression(child, bound, line);
    switch (expression.kind) {
      case 'literal':
        return;
      case 'name':
        if (!bound.has(expression.name) && !this.globallyBound.has(expression.name)) this.free.add(expression.name);
        return;
      case 'attribute':
        this.key(expression.name, line);
        visit(expression.object);
        return;
      case 'item':
        if (expression.index.kind === 'literal' && typeof expression.index.value === 'string') this.key(expression.index.value, line);
        visit(expression.object);
        visit(expression.index);
        return;
      case 'call':
        if (expression.callee.kind === 'name' && expression.callee.name === 'range') {
          expression.args.forEach(visit);
          Object.values(expression.kwargs).forEach(visit);
          return;
        }
        this.problems.push(`line ${line}: only range() can be called in a template; this template calls ${describeCallee(expression.callee)}`);
        visit(expression.callee);
        expression.args.forEach(visit);
        Object.values(expression.kwargs).forEach(visit);
        return;
      case 'filter':
        if (!knownFilters.has(expression.name)) this.problems.push(`line ${line}: unknown filter "${expression.name}"; filters: ${[...knownFilters].join(', ')}`);
        visit(expression.value);
        expression.args.forEach(visit);
        Object.values(expression.kwargs).forEach(visit);
        return;
      case 'test':
        if (!knownTests.has(expression.name)) this.problems.push(`line ${line}: unknown test "${expression.name}"; tests: ${[...knownTests].join(', ')}`);
        visit(expression.value);
        expression.args.forEach(visit);
        return;
      case 'unary':
        visit(expression.value);
        return;
      case 'binary':
        visit(expression.left);
        visit(expression.right);
        return;
      case 'condition':
        visit(expression.test);
        visit(expression.then);
        if (expression.otherwise) visit(expression.otherwise);
        return;
      case 'list':
        expression.items.forEach(visit);
        return;
      case 'dict':
        for (const entry of expression.entries) {
          if (entry.key.kind === 'literal' && typeof entry.key.value === 'string') this.key(entry.key.value, line);
          visit(entry.key);
          visit(entry.value);
        }
        return;
    }
  }
}

function describeCallee(callee: Expression): string {
  if (callee.kind === 'name') return `"${callee.name}"`;
  if (callee.kind === 'attribute') return `"${callee.name}" of a value`;
  return 'the result of an expression';
}

// A `{% set %}` at any level binds for the rest of the template in practice; treating it as bound
// everywhere is a slight over-approximation that never reports a false "undeclared variable".
function collectSetTargets(nodes: readonly TemplateNode[], bound: Set<string>): void {
  for (const node of nodes) {
    if (node.kind === 'set') for (const target of node.targets) bound.add(target);
    else if (node.kind === 'if') {
      for (const branch of node.branches) collectSetTargets(branch.body, bound);
      collectSetTargets(node.otherwise, bound);
    } else if (node.kind === 'for') {
      collectSetTargets(node.body, bound);
      collectSetTargets(node.otherwise, bound);
    }
  }
}

/** Free variables and problems of a parsed template. */
export function analyzeTemplate(nodes: readonly TemplateNode[]): TemplateAnalysis {
  const globallyBound = new Set<string>();
  collectSetTargets(nodes, globallyBound);
  const analyzer = new Analyzer(globallyBound);
  analyzer.nodes(nodes, new Set());
  return { variables: [...analyzer.free].sort(), problems: [...new Set(analyzer.problems)] };
}
