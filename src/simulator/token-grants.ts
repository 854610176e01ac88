/**
 * The tokens the simulator accepts and what each may do: namespaces it reaches, permissions it
 * holds, environments where it may change. The admin token holds everything.
 */
import type { Permission } from '../api/functions.js';
import type { EnvironmentType } from '../api/schemas.js';
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
}

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
  has(permission: Permission): boolean;
  mayChange(environment: EnvironmentType | null): boolean;
}

/** Looks tokens up; built once from the options. */
export class TokenGrants {
  private readonly grants = new Map<string, Grant>();

  constructor(state: SimState, adminToken: string, tokens: readonly SimTokenSpec[]) {
    this.grants.set(adminToken, this.build(state, { token: adminToken, login: 'sim-admin', namespaces: '*', permissions: '*' }, 'admin'));
    for (const spec of tokens) {
      const writes = spec.permissions === '*' || spec.permissions.some((p) => p.includes('update') || p.includes('create'));
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
    const envs = spec.changeEnvironments ? new Set<string>(spec.changeEnvironments) : null;
    const login = spec.login ?? (spec.namespaces === '*' && spec.permissions === '*' ? 'sim-admin' : 'sim-user');
    return {
      login,
      name: login === 'sim-admin' ? 'Simulator Admin' : `Simulator user ${login}`,
      nsIds,
      nsList: [...nsIds].sort((a, b) => a - b),
      allNamespaces: nsIds.size === all.length,
      level,
      admin: level === 'admin',
      has: (p) => permissions === null || permissions.has(p),
      mayChange: (env) => envs === null || (env !== null && envs.has(env)),
    };
  }
}
