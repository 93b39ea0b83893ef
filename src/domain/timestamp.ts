/** RFC 3339 in UTC with whole seconds, as Kubernetes writes metav1.Time. */
export function toRfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}
