// Entry of dist/matrix.js, the separate bundle that carries matrix-js-sdk. The hub requires it
// only when Matrix is configured (see load.ts), so a local-only hub never parses the SDK.
import type { Hub } from '../hub';
import type { RemoteLink } from '../remote';
import type { MatrixConfig } from './config';
import { quietSdkLogs } from './homeserver';
import { MatrixLink } from './link';
import type { Log } from '../../protocol/hubLog';

export function openMatrixLink(hub: Hub, config: MatrixConfig, log: Log): RemoteLink {
  quietSdkLogs(log);
  const link = new MatrixLink(hub, config, log);
  link.start();
  return link;
}
