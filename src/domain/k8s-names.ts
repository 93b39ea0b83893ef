// Kubernetes name and label syntax, as apimachinery's validation package defines it.
// Each check returns undefined when valid, else a short description of the rule broken.

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const DNS_LABEL_RULE = "lowercase letters, digits and '-', at most 63 characters";
export const DNS_SUBDOMAIN_RULE =
  "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters";
export const LABEL_VALUE_RULE =
  "at most 63 characters: letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
export const QUALIFIED_NAME_RULE =
  "an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.'";

export function isDnsLabel(value: string): boolean {
  return value.length <= 63 && DNS_LABEL.test(value);
}

export function isDnsSubdomain(value: string): boolean {
  return value.length <= 253 && DNS_SUBDOMAIN.test(value);
}

export function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

/** A label or annotation key: `[prefix/]name`. */
export function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length > 2) return false;
  const name = parts.length === 2 ? parts[1] : parts[0];
  const prefix = parts.length === 2 ? parts[0] : undefined;
  if (prefix !== undefined && (prefix.length === 0 || !isDnsSubdomain(prefix))) return false;
  return name !== undefined && name.length <= 63 && QUALIFIED_NAME_PART.test(name);
}
