/** The checks of a CRD's names, scope, printer columns and status fields, before kube-apiserver sees them. */
import type { ReconcilerPlan } from '../core/plan';
import type { CrdOptions } from '../core/reconciler';
import { reservedStatusFields, statusFieldName } from '../core/status';
import { statusFieldTypes } from './status-schema';

const dnsLabel = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const columnTypes = new Set(['integer', 'number', 'string', 'boolean', 'date']);
const builtinColumns = ['Phase', 'Ready', 'Age'];

/** Every reason kube-apiserver would refuse the CRD's names, scope or printer columns, one line each. */
export function crdProblems(
  plan: Pick<ReconcilerPlan, 'group' | 'version' | 'kind' | 'plural' | 'scope'>,
  options: CrdOptions,
): string[] {
  const problems: string[] = [];
  const show = (v: unknown): string => JSON.stringify(v)?.slice(0, 80) ?? String(v);
  if (typeof plan.group !== 'string' || plan.group.length > 253 || !dnsSubdomain.test(plan.group)) {
    problems.push(`group ${show(plan.group)} must be a DNS subdomain with at least one dot (example.com)`);
  }
  if (typeof plan.plural !== 'string' || plan.plural.length > 63 || !dnsLabel.test(plan.plural)) {
    problems.push(`plural ${show(plan.plural)} must be a lowercase DNS label`);
  } else if (`${plan.plural}.${plan.group}`.length > 253) {
    problems.push(`the CRD name ${plan.plural}.${plan.group} is longer than 253 characters`);
  }
  if (typeof plan.kind !== 'string' || plan.kind.length > 63 || !/^[A-Z][A-Za-z0-9]*$/.test(plan.kind)) {
    problems.push(`kind ${show(plan.kind)} must be UpperCamelCase letters and digits, at most 63`);
  }
  if (typeof plan.version !== 'string' || !/^v\d+((alpha|beta)\d+)?$/.test(plan.version)) {
    problems.push(`version ${show(plan.version)} must look like v1, v1alpha1 or v2beta3`);
  }
  if (plan.scope !== 'Namespaced' && plan.scope !== 'Cluster') {
    problems.push(`scope ${show(plan.scope)} must be Namespaced or Cluster`);
  }
  const names = new Set<string>();
  for (const [what, list] of [
    ['short name', options.shortNames ?? []],
    ['category', options.categories ?? []],
  ] as const) {
    for (const name of list) {
      if (typeof name !== 'string' || name.length > 63 || !dnsLabel.test(name)) {
        problems.push(`${what} ${show(name)} must be a lowercase DNS label`);
      } else if (
        what === 'short name' &&
        (names.has(name) || name === plan.plural || name === plan.kind.toLowerCase())
      ) {
        problems.push(`short name ${name} is given twice or repeats the plural or singular`);
      }
      if (what === 'short name') names.add(name);
    }
  }
  const columns = new Set(builtinColumns);
  for (const column of options.columns ?? []) {
    if (typeof column.name !== 'string' || column.name === '' || column.name.length > 63) {
      problems.push(`column name ${show(column.name)} must be 1 to 63 characters`);
    } else if (columns.has(column.name)) {
      problems.push(`column ${column.name} is given twice (Phase, Ready and Age are always there)`);
    } else columns.add(column.name);
    if (!columnTypes.has(column.type)) {
      problems.push(
        `column ${show(column.name)}: type ${show(column.type)} must be one of ${[...columnTypes].join(', ')}`,
      );
    }
    if (typeof column.jsonPath !== 'string' || !column.jsonPath.startsWith('.') || column.jsonPath.length > 1024) {
      problems.push(`column ${show(column.name)}: jsonPath ${show(column.jsonPath)} must start with . (.spec.image)`);
    }
    if (column.priority !== undefined && (!Number.isInteger(column.priority) || column.priority < 0)) {
      problems.push(`column ${show(column.name)}: priority must be a non-negative integer`);
    }
  }
  for (const [name, field] of Object.entries(options.status ?? {})) {
    if (reservedStatusFields.has(name)) {
      problems.push(
        `status field ${name} is homeostat's own (observedGeneration, phase and conditions are always there)`,
      );
    } else if (!statusFieldName.test(name)) {
      problems.push(`status field ${show(name)} must be a lowerCamelCase name of at most 63 characters`);
    }
    if (!statusFieldTypes.has(field?.type)) {
      problems.push(
        `status field ${show(name)}: type ${show(field?.type)} must be one of ${[...statusFieldTypes].join(', ')}`,
      );
    }
  }
  return problems;
}
