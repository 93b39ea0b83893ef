// The kubelet's container log files (CRI format, written by the container runtime): one record a
// line, `<RFC 3339 time> <stdout|stderr> <P|F> <text>`; a line the process printed that is longer
// than the runtime's buffer comes as P (partial) records ended by an F (full) one. Pure.

export interface CriLogState {
  /** The end of the text read so far that was not a whole record yet (no newline). */
  unfinished: string;
  /** Partial (P) records of a line not ended yet. */
  partial: string;
}

export function emptyCriLogState(): CriLogState {
  return { unfinished: '', partial: '' };
}

const RECORD = /^(\S+) (stdout|stderr) ([PF]) ?(.*)$/;

/** The process's whole lines in `chunk` (text appended to the file since the last read), and the state to read on with. */
export function readCriLog(chunk: string, state: CriLogState): { lines: string[]; state: CriLogState } {
  const records = (state.unfinished + chunk).split('\n');
  const unfinished = records.pop() ?? '';
  const lines: string[] = [];
  let partial = state.partial;
  for (const record of records) {
    const match = RECORD.exec(record);
    // Not a record of the format: kept whole, so that nothing printed escapes a check.
    if (!match) {
      lines.push(record);
      continue;
    }
    const [, , , tag, text = ''] = match;
    if (tag === 'P') partial += text;
    else {
      lines.push(partial + text);
      partial = '';
    }
  }
  return { lines, state: { unfinished, partial } };
}
