import { describe, expect, it } from 'vitest';
import { printable } from '../../src/store/sql/open-sql.js';
import { issueSpan, openIssueTrace } from '../../src/fleet/notices/issue-trace.js';
import { NO_TRACER } from '../../src/kernel/trace.js';
import { NO_TRACING, startTracing } from '../../src/tracing.js';
import { parseOperatorEnv } from '../../src/config/env.js';
import type { Store } from '../../src/store/store.js';

// Off, tracing costs nothing: no exporter, no span kept, and no trace read from the store or written to it.

/** A store any use of which fails the test. */
const untouchable = new Proxy({} as Store, {
  get: (_t, name) => {
    throw new Error(`the store was used (${String(name)}) with tracing off`);
  },
});

describe('tracing, off', () => {
  it('is off with no OTEL endpoint: the no-op tracer, nothing to export', () => {
    const env = parseOperatorEnv({});
    expect(env.ok && env.settings.otlpTraces).toBe(null);
    expect(startTracing({ otlpTraces: null, serviceName: 'yoke' })).toBe(NO_TRACING);
    expect(NO_TRACING.tracer).toBe(NO_TRACER);
    expect(NO_TRACER.startSpan('x').isRecording()).toBe(false);
  });

  it("reads and writes no issue's trace", async () => {
    const clock = { now: () => 0 };
    await openIssueTrace({ store: untouchable, clock }, { repo: 'acme/api', issue: 1, via: 'poll' });
    await issueSpan({ store: untouchable, clock, tracer: NO_TRACER }, { repo: 'acme/api', issue: 1 }, 'yoke.run', {
      start: 0,
    });
  });

  it('is on with OTEL_EXPORTER_OTLP_ENDPOINT, its traces endpoint and headers, as OpenTelemetry names them', () => {
    const env = parseOperatorEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=fleet',
    });
    expect(env.ok && env.settings.otlpTraces).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-team': 'fleet' },
    });
  });

  it('TR07 a bad header says where and what is wrong, never its value: a header written with a space for its equals sign, and bad percent-encoding', () => {
    const problems = (v: string) => {
      const r = parseOperatorEnv({ OTEL_EXPORTER_OTLP_HEADERS: v });
      return r.ok ? [] : r.problems;
    };
    expect(problems('x-team=fleet,Authorization Bearer sk-live-0123456789abcdef')).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS: header 2 is not key=value (its text is not shown), e.g. authorization=Bearer%20TOKEN',
    ]);
    expect(problems('authorization=Bearer%ZZsk-live-0123456789abcdef')).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS: the value of authorization is not valid percent-encoding (it is not shown): write a space as %20 and a % as %25',
    ]);
  });
});

describe('a database URL as yoke prints it (TR07)', () => {
  it.each([
    ['postgres://yoke:hunter2@db:5432/yoke', 'postgres://yoke:***@db:5432/yoke'],
    ['postgres://:hunter2@db/yoke', 'postgres://:***@db/yoke'],
    ['postgres://yoke:p@ss@word@db/yoke', 'postgres://yoke:***@db/yoke'],
    [
      'postgres://yoke@db/yoke?password=hunter2&sslmode=require',
      'postgres://yoke@db/yoke?password=***&sslmode=require',
    ],
    [
      'postgresql://yoke@db/yoke?sslpassword=hunter2&PassWord=x',
      'postgresql://yoke@db/yoke?sslpassword=***&PassWord=***',
    ],
    ['postgres://yoke:hunter2@[db', 'a PostgreSQL URL yoke could not read (not shown: it may hold a password)'],
    ['.yoke/yoke.db', '.yoke/yoke.db'],
  ])('TR07 %s is printed as %s: no password, in whatever place it is written', (url, shown) => {
    expect(printable(url)).toBe(shown);
    expect(printable(url)).not.toMatch(/hunter2|word@|ss@/);
  });
});
