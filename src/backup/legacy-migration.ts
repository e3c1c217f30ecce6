/**
 * Rewrites upstream-era text inside imported configuration (reference §6.1, §9.6, §12.4):
 * - Thymeleaf inline expressions `[[${expr}]]` and `[(${expr})]` become `{expr}`;
 * - textual Thymeleaf blocks `[# th:each="x : ${list}"]…[/]`, `[# th:if="${c}"]…[/]` and `[# th:unless="${c}"]…[/]`
 *   become `{#for x in list}…{/for}`, `{#if c}…{/if}` and `{#if !(c)}…{/if}`;
 * - product-prefixed vault references (`${xyzvault:NAME}`) become `${vault:NAME}`.
 * Everything else is left as it is.
 */

const INLINE = /\[\[\$\{\s*([^}]*?)\s*\}\]\]|\[\(\$\{\s*([^}]*?)\s*\}\)\]/g;
const BLOCK = /\[#\s*th:(each|if|unless)\s*=\s*"([^"]*)"\s*\]|\[\/(?:th:block)?\]/g;
const EACH = /^\s*(\w+)\s*(?:,\s*\w+\s*)?:\s*\$\{\s*(.+?)\s*\}\s*$/;
const CONDITION = /^\s*\$\{\s*(.+?)\s*\}\s*$/;
const LEGACY_VAULT = /\$\{[A-Za-z][\w-]*vault:/g;

function migrateBlocks(text: string): string {
  const open: string[] = [];
  return text.replace(BLOCK, (whole, kind: string | undefined, attribute: string | undefined) => {
    if (kind === undefined) {
      const closing = open.pop();
      return closing ?? whole;
    }
    if (kind === 'each') {
      const each = EACH.exec(attribute ?? '');
      if (!each) return whole;
      open.push('{/for}');
      return `{#for ${each[1]} in ${each[2]}}`;
    }
    const condition = CONDITION.exec(attribute ?? '');
    if (!condition) return whole;
    open.push('{/if}');
    return kind === 'if' ? `{#if ${condition[1]}}` : `{#if !(${condition[1]})}`;
  });
}

export function migrateText(text: string): string {
  let result = text.replace(LEGACY_VAULT, '${vault:');
  if (result.includes('[[${') || result.includes('[(${')) {
    result = result.replace(
      INLINE,
      (_whole, escaped: string | undefined, raw: string | undefined) => `{${escaped ?? raw}}`,
    );
  }
  if (result.includes('th:')) result = migrateBlocks(result);
  return result;
}

/** A copy of a JSON value with every string (not the keys) migrated. */
export function migrateLegacyContent(value: unknown): unknown {
  if (typeof value === 'string') return migrateText(value);
  if (Array.isArray(value)) return value.map(migrateLegacyContent);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: migrateLegacyContent(child),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
