/**
 * The operator: the one value homeostat's worker, informer bridge, HTTP API, CRD generation and CLI
 * take. Run it with `homeostat dev --operator dist/operator.js --examples examples`, or in production
 * with `homeostat worker|bridge|api --operator dist/operator.js`.
 */
import { defineOperator } from '../../../reconcilers';
import { tenant } from './tenant';

export default defineOperator({ name: 'tenant-operator', reconcilers: [tenant] });
