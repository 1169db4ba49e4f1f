// Loads the Matrix transport on demand from its own bundle (dist/matrix.js, next to dist/hub.js):
// matrix-js-sdk is large, and a hub without Matrix must start without reading it.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Hub } from '../hub';
import type { RemoteLink } from '../remote';
import type { MatrixConfig } from './config';
import type { Log } from '../../protocol/hubLog';

export function startMatrix(hub: Hub, config: MatrixConfig, log: Log): RemoteLink {
  const bundle = join(__dirname, 'matrix.js');
  // A path known only at run time: esbuild leaves it to Node instead of bundling it here.
  const { openMatrixLink } = createRequire(__filename)(bundle) as typeof import('./index');
  const link = openMatrixLink(hub, config, log);
  hub.setLink(link);
  return link;
}
