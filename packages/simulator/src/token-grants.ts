/**
 * The tokens the simulator accepts and what each may do: namespaces it reaches, permissions it
 * holds, environments it may read and change. The admin token holds everything.
 *
 * Environments grade records as the reference says (§5.4): changes by the environment of the app,
 * reads by the environment of the record asked for (an app, or the app a URL, backup, run, restore
 * point or log belongs to). A token limited to some environments reaches no record outside every
 * environment (an app without one, a server's own runs). Projects, servers and installers are not
 * graded: they stay readable, their environments and app counts cover only what the token reads.
 */
import type { Permission } from '../../../src/api/functions.js';
import type { EnvironmentType } from '../../../src/api/schemas.js';
import type { SimState } from './sim-state.js';

/** An extra token of the simulator. */
export interface SimTokenSpec {
  token: string;
  login?: string;
  /** Namespace codes, or every namespace. */
  namespaces: string[] | '*';
  permissions: Permission[] | '*';
  /** Environments where this token may change; default all. */
  changeEnvironments?: EnvironmentType[];
  /**
   * How a change in another environment is refused; default `access_denied`. The reference reads
   * both ways: a token "holds a change function only for the environments that its user's role may
   * change" (§5.4), and a function it does not hold is `function_not_allowed` (§5.5).
   */
  changeRefusal?: ChangeRefusal;
  /** Environments whose records this token may read; default all. */
  readEnvironments?: EnvironmentType[];
  /**
   * Environments whose records this token may read BY ID (`*.get`, logs, restore points); default
   * `readEnvironments`. Fewer than those: the lists show a record its read by id refuses with
   * access_denied (reference §5.4: reads by id are graded by the record's environment).
   */
  readByIdEnvironments?: EnvironmentType[];
}

/** The codes a change in an environment the token may not change can be refused with. */
export type ChangeRefusal = 'access_denied' | 'function_not_allowed';

/** What one token may do. */
export interface Grant {
  login: string;
  name: string;
  /** Namespace ids the token reaches. */
  nsIds: ReadonlySet<number>;
  /** Every namespace id, in id order, that the token reaches. */
  nsList: readonly number[];
  /** The token reaches every namespace (lists need no namespace filter). */
  allNamespaces: boolean;
  level: string;
  /** The admin token: also drives the control interface. */
  admin: boolean;
  /** The token reads every environment (lists need no environment filter). */
  readsAll: boolean;
  has(permission: Permission): boolean;
  mayChange(environment: EnvironmentType | null): boolean;
  /** The code a change refused by {@link mayChange} answers. */
  changeRefusal: ChangeRefusal;
  mayRead(environment: EnvironmentType | null): boolean;
  /** Whether a read by id of a record of this environment is allowed (see `readByIdEnvironments`). */
  mayReadById(environment: EnvironmentType | null): boolean;
}

/** Looks tokens up; built once from the options. */
export class TokenGrants {
  private readonly grants = new Map<string, Grant>();

  constructor(state: SimState, adminToken: string, tokens: readonly SimTokenSpec[]) {
    this.grants.set(
      adminToken,
      this.build(state, { token: adminToken, login: 'sim-admin', namespaces: '*', permissions: '*' }, 'admin'),
    );
    for (const spec of tokens) {
      const writes =
        spec.permissions === '*' || spec.permissions.some((p) => p.includes('update') || p.includes('create'));
      this.grants.set(spec.token, this.build(state, spec, writes ? 'operator' : 'viewer'));
    }
  }

  /** The grant of a bearer token, or undefined when the token is unknown. */
  find(token: string): Grant | undefined {
    return this.grants.get(token);
  }

  private build(state: SimState, spec: SimTokenSpec, level: string): Grant {
    const all = [...state.namespaces.values()];
    const reached = spec.namespaces === '*' ? all : all.filter((n) => (spec.namespaces as string[]).includes(n.code));
    const nsIds = new Set(reached.map((n) => n.id));
    const permissions = spec.permissions === '*' ? null : new Set<string>(spec.permissions);
    const changes = spec.changeEnvironments ? new Set<string>(spec.changeEnvironments) : null;
    const reads = spec.readEnvironments ? new Set<string>(spec.readEnvironments) : null;
    const byId = spec.readByIdEnvironments ? new Set<string>(spec.readByIdEnvironments) : reads;
    const login = spec.login ?? (spec.namespaces === '*' && spec.permissions === '*' ? 'sim-admin' : 'sim-user');
    return {
      login,
      name: login === 'sim-admin' ? 'Simulator Admin' : `Simulator user ${login}`,
      nsIds,
      nsList: [...nsIds].sort((a, b) => a - b),
      allNamespaces: nsIds.size === all.length,
      level,
      admin: level === 'admin',
      readsAll: reads === null,
      has: (p) => permissions === null || permissions.has(p),
      mayChange: (env) => changes === null || (env !== null && changes.has(env)),
      changeRefusal: spec.changeRefusal ?? 'access_denied',
      mayRead: (env) => reads === null || (env !== null && reads.has(env)),
      mayReadById: (env) =>
        (reads === null || (env !== null && reads.has(env))) && (byId === null || (env !== null && byId.has(env))),
    };
  }
}
