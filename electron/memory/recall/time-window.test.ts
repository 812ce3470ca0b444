import { describe, expect, it } from 'vitest';
import { readTimeWindow, withoutSpans } from './time-window.js';

// Tuesday 30 May 2023, 21:00 UTC; the calendar at UTC unless a test says otherwise.
const NOW = Date.UTC(2023, 4, 30, 21, 0);
const iso = (t: number) => new Date(t).toISOString().slice(0, 16);

function read(text: string, now = NOW, offset = 0) {
  const r = readTimeWindow(text, now, offset);
  return { window: r.window ? [iso(r.window.from), iso(r.window.to)] : null, words: r.spans.map(([s, e]) => text.slice(s, e)) };
}

describe('readTimeWindow', () => {
  it('reads days, months, seasons and years named outright', () => {
    expect(read('What painting did Melanie show on October 13, 2023?')).toEqual({
      window: ['2023-10-13T00:00', '2023-10-14T00:00'],
      words: ['October 13, 2023'],
    });
    expect(read('on 8 May, 2023').window).toEqual(['2023-05-08T00:00', '2023-05-09T00:00']);
    expect(read('the book he finished on 8th December, 2023').window).toEqual(['2023-12-08T00:00', '2023-12-09T00:00']);
    expect(read('the photo from 2023-05-03').window).toEqual(['2023-05-03T00:00', '2023-05-04T00:00']);
    expect(read('What did I do in March 2023?')).toEqual({ window: ['2023-03-01T00:00', '2023-04-01T00:00'], words: ['March 2023'] });
    expect(read('the beginning of November 2022').window).toEqual(['2022-11-01T00:00', '2022-11-11T00:00']);
    expect(read('the first half of September 2022').window).toEqual(['2022-09-01T00:00', '2022-09-16T00:00']);
    expect(read('the state she visited in summer 2021').window).toEqual(['2021-06-01T00:00', '2021-09-01T00:00']);
    expect(read('the charity event he organised in 2022').window).toEqual(['2022-01-01T00:00', '2023-01-01T00:00']);
  });

  it('reads a month or day without its year as the last one up to now', () => {
    expect(read('Where did we go in May?').window).toEqual(['2023-05-01T00:00', '2023-06-01T00:00']);
    expect(read('What did I buy last May?').window).toEqual(['2022-05-01T00:00', '2022-06-01T00:00']);
    expect(read('in June').window).toEqual(['2022-06-01T00:00', '2022-07-01T00:00']);
    expect(read('on May 3').window).toEqual(['2023-05-03T00:00', '2023-05-04T00:00']);
    expect(read('on June 3').window).toEqual(['2022-06-03T00:00', '2022-06-04T00:00']);
    expect(read('the second week of November').window).toEqual(['2022-11-08T00:00', '2022-11-15T00:00']);
    expect(read('last summer').window).toEqual(['2022-06-01T00:00', '2022-09-01T00:00']);
    // A year named beside it is the year of a date named without one.
    expect(read('Where was John between August 11 and August 15 2023?').window).toEqual(['2023-08-11T00:00', '2023-08-16T00:00']);
  });

  it('does not read a name or a verb as a month', () => {
    expect(read('What did May say about the trip?')).toEqual({ window: null, words: [] });
    expect(read('Did June like the cake?').window).toBeNull();
    expect(read('the protest march in the city').window).toBeNull();
    expect(read('you may want to rest').window).toBeNull();
    expect(read('the fall of the empire').window).toBeNull();
    expect(read('How many 5K runs did I do?').window).toBeNull();
  });

  it('reads times relative to when the question was asked', () => {
    expect(read('What did I cook yesterday?')).toEqual({ window: ['2023-05-29T00:00', '2023-05-30T00:00'], words: ['yesterday'] });
    expect(read('the day before yesterday').window).toEqual(['2023-05-28T00:00', '2023-05-29T00:00']);
    expect(read('I mentioned cooking something a couple of days ago').window).toEqual(['2023-05-27T21:00', '2023-05-29T21:00']);
    expect(read('two weeks ago').window).toEqual(['2023-05-13T09:00', '2023-05-20T09:00']);
    expect(read('last week').window).toEqual(['2023-05-22T00:00', '2023-05-29T00:00']);
    expect(read('What cocktail did I try last weekend?').window).toEqual(['2023-05-27T00:00', '2023-05-29T00:00']);
    expect(read('last Thursday').window).toEqual(['2023-05-25T00:00', '2023-05-26T00:00']);
    expect(read('last month').window).toEqual(['2023-04-01T00:00', '2023-05-01T00:00']);
    expect(read('last year').window).toEqual(['2022-01-01T00:00', '2023-01-01T00:00']);
    expect(read('How many plants did I get in the last month?').window).toEqual(['2023-04-30T10:26', '2023-05-30T21:00']);
    expect(read('over the past two weeks').window).toEqual(['2023-05-16T21:00', '2023-05-30T21:00']);
    expect(read('this month').window).toEqual(['2023-05-01T00:00', '2023-05-30T21:00']);
    expect(read('What have I been reading recently?').window).toEqual(['2023-04-30T21:00', '2023-05-30T21:00']);
  });

  it('reads a question asking for the newest as no window, but `latest`', () => {
    const latest = (text: string) => {
      const r = readTimeWindow(text, NOW, 0);
      return { latest: r.latest, window: r.window ? [iso(r.window.from), iso(r.window.to)] : null };
    };
    expect(latest('Which mode of transport did I use most recently, a bus or a train?')).toEqual({ latest: true, window: null });
    expect(latest("What's the latest on Sam's new job?")).toEqual({ latest: true, window: null });
    expect(latest('Which of the two did I see more recently?')).toEqual({ latest: true, window: null });
    expect(latest('我最近一次去爬山是什么时候？')).toEqual({ latest: true, window: null });
    // "recently" alone is the last 30 days, as before; a date named still names its window.
    expect(latest('What have I been reading recently?')).toEqual({ latest: false, window: ['2023-04-30T21:00', '2023-05-30T21:00'] });
    expect(latest('我最近在读什么？').latest).toBe(false);
    expect(latest('What did we paint in our latest project in July 2023?')).toEqual({ latest: true, window: ['2023-07-01T00:00', '2023-08-01T00:00'] });
  });

  it('reads a relative time from a date the question names, and covers that date', () => {
    expect(read('What did John do the week before August 3, 2023?').window).toEqual(['2023-07-27T00:00', '2023-08-04T00:00']);
    expect(read('the puppy she got two weeks before August 11, 2023').window).toEqual(['2023-07-25T12:00', '2023-08-12T00:00']);
    expect(read('What did Maria do last weekend before April 10, 2023?')).toEqual({
      window: ['2023-04-08T00:00', '2023-04-11T00:00'],
      words: ['last weekend before', 'April 10, 2023'],
    });
    expect(read('What did Joanna finish last Friday on 23 January, 2022?').window).toEqual(['2022-01-21T00:00', '2022-01-24T00:00']);
    // Before what is not known: no window, but the words are time words.
    expect(read('What did I do the week before my trip?')).toEqual({ window: null, words: ['the week before'] });
  });

  it('names no window for a question that asks for a time, or for the future', () => {
    expect(read('How many days ago did I meet Emma?')).toEqual({ window: null, words: [] });
    expect(read('How long ago was her birthday?').window).toBeNull();
    expect(read('Can you recommend a show to watch tonight?')).toEqual({ window: null, words: ['tonight'] });
    expect(read('What should I serve for dinner this weekend?')).toEqual({ window: null, words: ['this weekend'] });
    expect(read('I am planning my meal prep next week').window).toBeNull();
    expect(read('the vegan place you recommended last time').window).toBeNull();
    // On a Sunday, this weekend has begun.
    expect(read('this weekend', Date.UTC(2023, 4, 28, 15)).window).toEqual(['2023-05-27T00:00', '2023-05-28T15:00']);
  });

  it('reads Chinese times', () => {
    expect(read('上个月我买了什么？')).toEqual({ window: ['2023-04-01T00:00', '2023-05-01T00:00'], words: ['上个月'] });
    expect(read('两周前').window).toEqual(['2023-05-13T09:00', '2023-05-20T09:00']);
    expect(read('去年五月我们去了哪里').window).toEqual(['2022-05-01T00:00', '2022-06-01T00:00']);
    expect(read('昨天').window).toEqual(['2023-05-29T00:00', '2023-05-30T00:00']);
    expect(read('前天').window).toEqual(['2023-05-28T00:00', '2023-05-29T00:00']);
    expect(read('2023年5月3日').window).toEqual(['2023-05-03T00:00', '2023-05-04T00:00']);
    expect(read('5月3日那天').window).toEqual(['2023-05-03T00:00', '2023-05-04T00:00']);
    expect(read('二〇二二年').window).toEqual(['2022-01-01T00:00', '2023-01-01T00:00']);
    expect(read('上周五').window).toEqual(['2023-05-26T00:00', '2023-05-27T00:00']);
    expect(read('上周末').window).toEqual(['2023-05-27T00:00', '2023-05-29T00:00']);
    expect(read('最近三个月').window).toEqual(['2023-02-28T13:19', '2023-05-30T21:00']);
    expect(read('三个月前').window).toEqual(['2023-02-13T08:02', '2023-03-15T18:36']);
    expect(read('去年夏天').window).toEqual(['2022-06-01T00:00', '2022-09-01T00:00']);
    // 几月 asks which month; 三个月 is a length; 明天 is the future.
    expect(read('你是几月去的？').window).toBeNull();
    expect(read('学了三个月').window).toBeNull();
    expect(read('明天见').window).toBeNull();
  });

  it('says whether the window is only dates named outright', () => {
    expect(readTimeWindow('What did Nate make on 9 November, 2022?', NOW, 0).named).toBe(true);
    expect(readTimeWindow('in March 2023 and in May', NOW, 0).named).toBe(true);
    expect(readTimeWindow('last Friday on 23 January, 2022', NOW, 0).named).toBe(false);
    expect(readTimeWindow('two weeks ago', NOW, 0).named).toBe(false);
    expect(readTimeWindow('no time here', NOW, 0).named).toBe(false);
  });

  it("reads the calendar in the person's offset", () => {
    // 23:30 on 30 May in UTC+8 is 15:30 UTC; "yesterday" there is 29 May, local midnight to midnight.
    const r = readTimeWindow('yesterday', Date.UTC(2023, 4, 30, 15, 30), 480);
    expect(r.window).toEqual({ from: Date.UTC(2023, 4, 28, 16), to: Date.UTC(2023, 4, 29, 16) });
  });

  it('never throws on odd input', () => {
    expect(readTimeWindow('', NOW).window).toBeNull();
    expect(readTimeWindow(undefined as unknown as string, NOW).window).toBeNull();
    expect(readTimeWindow('yesterday', NaN).window).toBeNull();
    expect(read('February 31, 2023').window).toBeNull();
    expect(read('on 30 February').window).toBeNull();
    expect(() => readTimeWindow('last '.repeat(5000), NOW)).not.toThrow();
  });
});

describe('withoutSpans', () => {
  it('blanks the time words and keeps the rest', () => {
    const text = 'What did Maria do last weekend before April 10, 2023?';
    const r = readTimeWindow(text, NOW, 0);
    expect(withoutSpans(text, r.spans).replace(/\s+/g, ' ')).toBe('What did Maria do ?');
    expect(withoutSpans('no time here', [])).toBe('no time here');
  });
});
