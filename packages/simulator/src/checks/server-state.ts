/** The servers check's staging: a server in a bad state. */
import type { Server } from '../../../../src/api/schemas.js';
import type { StageContext } from './stage-context.js';

/** Staging operations of the servers check (`control.checks.servers`). */
export function serversStaging(sim: StageContext) {
  return {
    /** Sets a server's state (e.g. error, unreachable). */
    setState(serverId: number, state: string): Server {
      sim.now();
      const server = sim.core.state.servers.get(serverId);
      if (!server) throw new Error(`servers.setState: server ${serverId} not found`);
      server.state = state;
      return sim.core.views.server(server, sim.core.views.appCounts().byServer);
    },
  };
}
