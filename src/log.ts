import { pino, type Logger } from 'pino';

export type { Logger };

export interface LogOptions {
  level: string;
  /** Where log lines go; standard output unless a test collects them. */
  destination?: pino.DestinationStream;
}

/**
 * Structured JSON logs: a constant message plus fields. Object bodies are never logged; the
 * redaction below is a second line of defence should a Secret's data ever reach a log call.
 */
export function createLogger(options: LogOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'resource-distributor' },
      redact: {
        paths: ['data', 'stringData', 'binaryData', '*.data', '*.stringData', '*.binaryData', '*.*.data'],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}
