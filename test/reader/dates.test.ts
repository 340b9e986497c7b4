import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFeedDate } from '../../src/reader/dates.js';

describe('parseFeedDate', () => {
  const cases: Array<[string, string | undefined]> = [
    ['Tue, 10 Jun 2003 04:00:00 GMT', '2003-06-10T04:00:00.000Z'],
    ['Tue, 10 Jun 2003 04:00:00 UT', '2003-06-10T04:00:00.000Z'],
    ['Tue, 10 Jun 2003 04:00:00 Z', '2003-06-10T04:00:00.000Z'],
    ['Tue, 10 Jun 2003 04:00:00 EST', '2003-06-10T09:00:00.000Z'],
    ['Tue, 10 Jun 2003 04:00:00 PDT', '2003-06-10T11:00:00.000Z'],
    ['Tue, 10 Jun 2003 04:00:00 +0530', '2003-06-09T22:30:00.000Z'],
    ['Tue, 10 Jun 2003 04:00:00 -08:00', '2003-06-10T12:00:00.000Z'],
    ['10 Jun 2003 04:00:00 GMT', '2003-06-10T04:00:00.000Z'], // no day name
    ['Tue, 10 Jun 03 04:00:00 GMT', '2003-06-10T04:00:00.000Z'], // two-digit year
    ['Sun, 1 Jan 99 00:00 GMT', '1999-01-01T00:00:00.000Z'],
    ['Mon, 2 jan 2006 3:04:05 +0000', '2006-01-02T03:04:05.000Z'], // single digits, lower-case month
    ['  Mon,   02  Jan   2006   15:04:05   GMT  ', '2006-01-02T15:04:05.000Z'], // extra whitespace
    ['Monday, 02 January 2006 15:04:05 GMT', '2006-01-02T15:04:05.000Z'],
    ['January 2, 2006 15:04 PST', '2006-01-02T23:04:00.000Z'],
    ['2024-01-02 03:04:05', '2024-01-02T03:04:05.000Z'], // no zone: UTC
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.000Z'],
    ['2024-01-02T03:04:05.250+01:00', '2024-01-02T02:04:05.250Z'],
    ['2024-01-02T03:04:05+0100', '2024-01-02T02:04:05.000Z'],
    ['2024-01-02', '2024-01-02T00:00:00.000Z'],
    ['20240102T030405Z', '2024-01-02T03:04:05.000Z'],
    ['2003-12-31T10:14:55-08:00', '2003-12-31T18:14:55.000Z'],
    ['Thu, 31 Feb 2003 00:00:00 GMT', undefined],
    ['2024-13-01', undefined],
    ['Tue, 10 Jun 2003 04:00:00 XYZ', undefined],
    ['Fri, 31 Dec 9999 23:00:00 -0500', undefined], // year 10000 in UTC
    ['Fri, 31 Dec 9999 18:00:00 -0500', '9999-12-31T23:00:00.000Z'],
    ['yesterday', undefined],
    ['', undefined],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${expected ?? 'undefined'}`, () => assert.equal(parseFeedDate(input), expected));
  }
});
