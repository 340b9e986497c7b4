import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

/** Fails unless loading this one variable stops with one clear ConfigError line that names it. */
function expectConfigError(variable: string, value: string) {
  assert.throws(
    () => loadConfig({ [variable]: value }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `${variable}=${value}: expected a ConfigError, got ${String(error)}`);
      assert.doesNotMatch(error.message, /\n/);
      assert.ok(error.message.includes(variable), `the message names ${variable}: ${error.message}`);
      return true;
    },
  );
}

describe('loadConfig', () => {
  it('defaults every setting as DESIGN.md\'s table says', () => {
    assert.deepEqual(loadConfig({}), {
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: './data/masthead.sqlite',
      redisUrl: undefined,
      outboundAllow: [],
      companySiteUrl: 'https://{domain}/',
      llm: { baseUrl: undefined, apiKey: undefined, model: undefined },
      logLevel: 'info',
    });
  });

  it('reads every setting from the environment', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://masthead:secret@db.internal:5432/masthead',
      REDIS_URL: 'redis://cache.internal:6379/0',
      OUTBOUND_ALLOW: '127.0.0.1:8081, Localhost:9000,[::1]:80',
      COMPANY_SITE_URL: 'http://127.0.0.1:8081/sites/{domain}/',
      LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      LLM_API_KEY: 'sk-test',
      LLM_MODEL: 'llama3',
      LOG_LEVEL: 'debug',
    });
    assert.deepEqual(config, {
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://masthead:secret@db.internal:5432/masthead',
      redisUrl: 'redis://cache.internal:6379/0',
      outboundAllow: ['127.0.0.1:8081', 'localhost:9000', '[::1]:80'],
      companySiteUrl: 'http://127.0.0.1:8081/sites/{domain}/',
      llm: { baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'sk-test', model: 'llama3' },
      logLevel: 'debug',
    });
  });

  it('takes a SQLite path, :memory: or a postgresql:// URL as DATABASE_URL', () => {
    for (const url of ['/var/lib/masthead/db.sqlite', 'relative.sqlite', ':memory:', 'postgresql://localhost/masthead']) {
      assert.equal(loadConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
  });

  it('accepts PORT 0 and 65535', () => {
    assert.equal(loadConfig({ PORT: '0' }).port, 0);
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
  });

  it('stops on a bad value with one line that names the variable', () => {
    for (const [variable, value] of [
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['PORT', '-1'],
      ['PORT', '80.5'],
      ['HOST', '  '],
      ['LOG_LEVEL', 'loud'],
      ['DATABASE_URL', 'mysql://x'],
      ['DATABASE_URL', ''],
      ['REDIS_URL', 'http://cache:6379'],
      ['REDIS_URL', 'not a url'],
      ['OUTBOUND_ALLOW', 'nonsense'],
      ['OUTBOUND_ALLOW', '127.0.0.1:99999'],
      ['LLM_BASE_URL', 'ftp://x'],
      ['LLM_BASE_URL', 'not a url'],
      ['COMPANY_SITE_URL', 'https://example.com/'],
      ['COMPANY_SITE_URL', 'ftp://{domain}/'],
    ] as const) {
      expectConfigError(variable, value);
    }
  });
});
