/** Names of vault secrets and tenants, and the parts of a `${vault:...}` reference. */

export const DEFAULT_TENANT = 'default';

/** Letters, digits, `.`, `_`, `-`; 1 to 200 characters. */
export const SECRET_NAME_PATTERN = '^[A-Za-z0-9._-]{1,200}$';
const SECRET_NAME = new RegExp(SECRET_NAME_PATTERN);

export const SECRET_NAME_RULE = "letters, digits, '.', '_' and '-', 1 to 200 characters";

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** `${vault:NAME}` for the default tenant, `${vault:tenant/NAME}` otherwise. */
export function vaultReference(name: string, tenant = DEFAULT_TENANT): string {
  return tenant === DEFAULT_TENANT ? `\${vault:${name}}` : `\${vault:${tenant}/${name}}`;
}

/** The inside of a reference (`NAME` or `tenant/NAME`) split into tenant and name. */
export function parseReference(inside: string): { tenant: string; name: string } {
  const slash = inside.indexOf('/');
  return slash < 0
    ? { tenant: DEFAULT_TENANT, name: inside }
    : { tenant: inside.slice(0, slash), name: inside.slice(slash + 1) };
}
