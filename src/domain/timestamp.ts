/** RFC 3339 in UTC with whole seconds, as Kubernetes writes metav1.Time. */
export function toRfc3339(date: Date): string {
  // A pass stamps every copy it writes with the same time: formatted once, not once per copy.
  const ms = date.getTime();
  if (ms !== last.ms) {
    last.ms = ms;
    last.text = date.toISOString().replace(/\.\d+Z$/, 'Z');
  }
  return last.text;
}

const last = { ms: NaN, text: '' };
